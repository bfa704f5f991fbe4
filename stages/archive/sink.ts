import { DurableBatcher, type DurableBatchLimits } from '../../pipeline/durable-batcher.js';
import type { RowSink } from '../../ports/row-sink.js';
import type { CaptureRow, OutputBatch } from '../../schemas/output-tables.js';
import type { BuildMembers, WarcMembers, WarcPlacement, WarcSink } from '../../ports/warc-sink.js';

/** Where the archive's `captures` rows go. */
export type CapturesSink = RowSink<Pick<OutputBatch, 'captures'>>;

/**
 * Appends each exchange's records to the WARC file as it comes, and collects `captures`
 * rows; a batch is made durable in this order: WARC fsync, then the Parquet file (itself
 * tmp + fsync + rename). `add` resolves only then, so the runner acks an exchange only when
 * its record and its row are both on disk: a kill before that redelivers it, and the view
 * keeps one row per capture_id (the earliest file's, whose record is complete).
 */
export class ArchiveSink {
  private readonly batcher: DurableBatcher<CaptureRow>;
  private appends = new Set<Promise<unknown>>();

  constructor(
    private readonly warc: WarcSink,
    private readonly captures: CapturesSink,
    limits: DurableBatchLimits,
  ) {
    this.batcher = new DurableBatcher<CaptureRow>(async (rows) => {
      await this.warc.sync();
      await this.captures.write({ captures: rows });
    }, limits);
  }

  /** Resolves with what `build` made once the exchange is durable (see above). */
  add<T extends WarcMembers>(build: BuildMembers<T>, rowOf: (placed: WarcPlacement, built: T) => CaptureRow): Promise<T> {
    const appended = this.warc.append(build);
    this.appends.add(appended);
    const settled = () => this.appends.delete(appended);
    return appended.then(
      async (placed) => {
        settled();
        await this.batcher.add(rowOf(placed, placed.built));
        return placed.built;
      },
      (err: unknown) => {
        settled();
        throw err;
      },
    );
  }

  /** Makes every appended exchange durable and written to `captures`; batches are written one at a time. */
  flush(): Promise<void> {
    return this.batcher.flush();
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.appends]);
    await this.flush();
    await this.warc.close();
    await this.captures.close();
  }
}
