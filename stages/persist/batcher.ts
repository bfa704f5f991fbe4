import { emptyBatch, type RowBatch } from './rows.js';

export interface OutputWriter {
  write(batch: RowBatch): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Collects rows from many messages into one Parquet file per table. `add` resolves only
 * after the file holding the rows is durably written, so the runner acks a message only
 * then: a crash before that redelivers the message, and the views' dedup hides the repeat.
 */
export class RowBatcher {
  private batch = emptyBatch();
  private rows = 0;
  private waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly writer: OutputWriter,
    private readonly opts: { maxRows: number; maxDelayMs: number },
  ) {}

  add(rows: RowBatch): Promise<void> {
    this.batch.pages.push(...rows.pages);
    this.batch.links.push(...rows.links);
    this.batch.fetch_log.push(...rows.fetch_log);
    this.rows += rows.pages.length + rows.fetch_log.length;
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.rows >= this.opts.maxRows) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.opts.maxDelayMs);
    return done;
  }

  /** writes what is pending; files are written one at a time */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiters.length === 0) return this.writing;
    const batch = this.batch;
    const waiters = this.waiters;
    this.batch = emptyBatch();
    this.rows = 0;
    this.waiters = [];
    this.writing = this.writing.then(async () => {
      try {
        await this.writer.write(batch);
        for (const w of waiters) w.resolve();
      } catch (err) {
        for (const w of waiters) w.reject(err as Error);
      }
    });
    return this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
    await this.writer.close();
  }
}
