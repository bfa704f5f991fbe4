import { openParquetOutput as openOutput, type ParquetOutput } from '../pipeline/adapters/parquet/row-sink.js';
import { isRemoteOutput } from '../pipeline/adapters/output-layout.js';
import { openS3Store } from '../pipeline/adapters/s3-store.js';
import { makeStagingDir } from '../pipeline/adapters/staging-dir.js';
import type { Logger } from '../pipeline/logger.js';
import type { CrawlSettings } from '../pipeline/settings.js';
import { WarcFileSink, type WarcFilesOptions } from '../pipeline/adapters/warc/file-sink.js';
import { repairAbandonedWarcs } from '../pipeline/adapters/warc/repair.js';
import { UploadedWarcSink } from '../pipeline/adapters/warc/uploaded-sink.js';
import type { WarcSink } from '../ports/warc-sink.js';
import { ARCHIVE_SOFTWARE, warcinfoHeader, type ArchiveOutput } from '../stages/archive/index.js';

/**
 * The row sink of persist (pages, links, fetch_log) and of the archive (captures): Parquet
 * files in the output, a local directory or an object store. Several workers may share
 * one directory, so a leftover `.tmp` is only removed once it is clearly abandoned. A batch
 * is a few tens of MB, so the writer's DuckDB gets a small memory limit instead of its
 * default of most of the machine's RAM.
 */
export async function openParquetOutput(outDir: string): Promise<ParquetOutput> {
  const store = isRemoteOutput(outDir) ? await openS3Store(outDir) : undefined;
  return openOutput(outDir, { staleTmpAgeMs: 10 * 60 * 1000, threads: 1, memoryLimit: '256MB', store });
}

/**
 * The archive stage's output: WARC files under `warc/`, rows in `captures/`, in a local
 * directory or an object store (the WARC files then spooled in a temporary directory).
 */
export async function openArchiveOutput(outDir: string, settings: CrawlSettings, log: Logger): Promise<ArchiveOutput> {
  const files: WarcFilesOptions = { crawlId: settings.crawlId, maxBytes: settings.warcMaxBytes, fileHeader: warcinfoHeader(settings.crawlId, ARCHIVE_SOFTWARE) };
  return {
    warc: isRemoteOutput(outDir) ? new UploadedWarcSink(await makeStagingDir('warc'), files, await openS3Store(outDir)) : await openWarcFiles(outDir, files, log),
    captures: await openParquetOutput(outDir),
    batch: { maxRows: settings.persistBatchRows, maxDelayMs: settings.persistFlushMs },
  };
}

/** WARC files in a local directory; before this process writes any, the files of writers that died are cut back to whole records. */
async function openWarcFiles(outDir: string, files: WarcFilesOptions, log: Logger): Promise<WarcSink> {
  const sink = new WarcFileSink(outDir, files);
  for (const r of await repairAbandonedWarcs(sink.dir)) log.warn({ file: r.file, cutBytes: r.cutBytes }, 'WARC file of a dead writer sealed (torn tail cut)');
  return sink;
}
