import { existsSync } from 'node:fs';
import { compactOutput, DEFAULT_MIN_AGE_MS, DEFAULT_TARGET_BYTES, type CompactOptions, type CompactSummary } from '../pipeline/adapters/duckdb-compact.js';
import { isRemoteOutput } from '../pipeline/adapters/output-layout.js';
import { compactRemoteOutput } from '../pipeline/adapters/remote-compact.js';
import { openS3Store } from '../pipeline/adapters/s3-store.js';
import { UsageError } from './usage-error.js';
import { resolveOut } from './output-location.js';

const MiB = 1024 * 1024;

export function compactSummaryLine(s: CompactSummary): string {
  if (s.filesBefore === 0) return 'compact: nothing to merge';
  const mb = (n: number) => (n / MiB).toFixed(1);
  return (
    `compact: ${s.partitions} partitions, ${s.filesBefore} files -> ${s.filesAfter}, ` +
    `${s.rowsBefore} rows -> ${s.rowsAfter} (duplicates dropped: ${s.rowsBefore - s.rowsAfter}), ${mb(s.bytesBefore)} MB -> ${mb(s.bytesAfter)} MB`
  );
}

/** A local output directory or an object store's, merged the same way. */
export async function compactAnyOutput(outDir: string, options: CompactOptions): Promise<CompactSummary> {
  return isRemoteOutput(outDir) ? compactRemoteOutput(await openS3Store(outDir), options) : compactOutput(outDir, options);
}

/** `crawl compact [--out DIR|s3://…]`: merges each partition's small Parquet files (see pipeline/adapters/duckdb-compact.ts). */
export async function runCompact(o: { out: string; minAgeMs?: number; targetMb?: number; memoryMb?: number }): Promise<number> {
  const outDir = resolveOut(o.out, 'compact', true);
  if (!isRemoteOutput(outDir) && !existsSync(outDir)) throw new UsageError(`no crawl output at ${outDir} (use --out DIR)`);
  const summary = await compactAnyOutput(outDir, {
    minAgeMs: o.minAgeMs ?? DEFAULT_MIN_AGE_MS,
    targetBytes: o.targetMb !== undefined ? o.targetMb * MiB : DEFAULT_TARGET_BYTES,
    // DuckDB counts its memory limit in MB of 10^6 bytes
    ...(o.memoryMb !== undefined ? { memoryLimitBytes: o.memoryMb * 1_000_000 } : {}),
  });
  process.stdout.write(compactSummaryLine(summary) + '\n');
  return 0;
}
