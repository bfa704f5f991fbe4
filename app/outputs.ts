import { openParquetOutput as openOutput } from '../pipeline/adapters/duckdb-output.js';
import { isRemoteOutput } from '../pipeline/adapters/output-layout.js';
import { openS3Store } from '../pipeline/adapters/s3-store.js';
import { makeStagingDir } from '../pipeline/adapters/staging-dir.js';
import type { Logger } from '../pipeline/logger.js';
import type { CrawlSettings } from '../pipeline/settings.js';
import type { ArchiveOutput } from '../stages/archive/index.js';
import type { OutputWriter } from '../stages/persist/index.js';

/**
 * The persist stage's writer for a local output directory. Several persist workers may share
 * one directory, so a leftover `.tmp` is only removed once it is clearly abandoned. A batch
 * is a few tens of MB, so the writer's DuckDB gets a small memory limit instead of its
 * default of most of the machine's RAM.
 */
export async function openParquetOutput(outDir: string): Promise<OutputWriter> {
  const store = isRemoteOutput(outDir) ? await openS3Store(outDir) : undefined;
  return openOutput(outDir, { staleTmpAgeMs: 10 * 60 * 1000, threads: 1, memoryLimit: '256MB', store });
}

/**
 * The archive stage's output: WARC files under `warc/`, rows in `captures/`, in a local
 * directory or an object store (the WARC files then spooled in a temporary directory).
 */
export async function openArchiveOutput(outDir: string, settings: CrawlSettings, log: Logger): Promise<ArchiveOutput> {
  const remote = isRemoteOutput(outDir);
  return {
    outDir: remote ? await makeStagingDir('warc') : outDir,
    ...(remote ? { store: await openS3Store(outDir) } : {}),
    crawlId: settings.crawlId,
    maxWarcBytes: settings.warcMaxBytes,
    captures: await openParquetOutput(outDir),
    batch: { maxRows: settings.persistBatchRows, maxDelayMs: settings.persistFlushMs },
    onRepaired: (repaired) => {
      for (const r of repaired) log.warn({ file: r.file, cutBytes: r.cutBytes }, 'WARC file of a dead writer sealed (torn tail cut)');
    },
  };
}
