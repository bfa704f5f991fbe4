import { openParquetOutput as openOutput } from '../pipeline/adapters/duckdb-output.js';
import type { OutputWriter } from '../stages/persist/index.js';

/**
 * The persist stage's writer for a local output directory. Several persist workers may share
 * one directory, so a leftover `.tmp` is only removed once it is clearly abandoned. A batch
 * is a few tens of MB, so the writer's DuckDB gets a small memory limit instead of its
 * default of most of the machine's RAM.
 */
export async function openParquetOutput(outDir: string): Promise<OutputWriter> {
  return openOutput(outDir, { staleTmpAgeMs: 10 * 60 * 1000, threads: 1, memoryLimit: '256MB' });
}
