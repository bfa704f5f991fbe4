import type { CaptureRow, OutputBatch } from '../../schemas/output-tables.js';
import type { Built, BuildRecords, Placement, WarcWriter } from './warc-file.js';

export interface CapturesWriter {
  write(batch: Partial<OutputBatch>): Promise<unknown>;
  close(): Promise<void>;
}

interface Waiting {
  row: CaptureRow;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Appends each exchange's records to the WARC file as it comes, and collects `captures`
 * rows; a batch is made durable in this order: WARC fsync, then the Parquet file (itself
 * tmp + fsync + rename). `add` resolves only then, so the runner acks an exchange only when
 * its record and its row are both on disk: a kill before that redelivers it, and the view
 * keeps one row per capture_id (the earliest file's, whose record is complete).
 */
export class ArchiveSink {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private appends = new Set<Promise<unknown>>();

  constructor(
    private readonly warc: WarcWriter,
    private readonly captures: CapturesWriter,
    private readonly opts: { maxRows: number; maxDelayMs: number },
  ) {}

  /** Resolves with what `build` made once the exchange is durable (see above). */
  add<T extends Built>(build: BuildRecords<T>, rowOf: (placed: Placement, built: T) => CaptureRow): Promise<T> {
    const appended = this.warc.append(build);
    this.appends.add(appended);
    return new Promise<T>((resolve, reject) => {
      appended.then(
        (placed) => {
          this.appends.delete(appended);
          this.waiting.push({ row: rowOf(placed, placed.built), resolve: () => resolve(placed.built), reject });
          if (this.waiting.length >= this.opts.maxRows) void this.flush();
          else this.timer ??= setTimeout(() => void this.flush(), this.opts.maxDelayMs);
        },
        (err: Error) => {
          this.appends.delete(appended);
          reject(err);
        },
      );
    });
  }

  /** Makes every appended exchange durable and written to `captures`; batches are written one at a time. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(async () => {
      const batch = this.waiting;
      this.waiting = [];
      if (batch.length === 0) return;
      try {
        await this.warc.sync();
        await this.captures.write({ captures: batch.map((w) => w.row) });
        for (const w of batch) w.resolve();
      } catch (err) {
        for (const w of batch) w.reject(err as Error);
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.appends]);
    await this.flush();
    await this.warc.close();
    await this.captures.close();
  }
}
