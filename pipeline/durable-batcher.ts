/**
 * Batch-until-durable, the one way the output stages (persist, archive) store what a message
 * becomes. Items from many messages are collected and made durable together, since a durable
 * write (an fsync, a Parquet file, an upload) costs about the same for one row as for a
 * thousand. `add` resolves only once the write holding the item is durable, and a stage's
 * handler awaits it: the runner acks a message after its handler returns, so only what is
 * stored is acked. A process killed before that has its messages redelivered, and the
 * outputs' deduplication hides the repeat.
 *
 * A batch is written when its items count `maxRows` rows (`rowsOf`, one an item unless told)
 * or `maxDelayMs` after its first item, whichever comes first. Writes run one at a time, in
 * order; a write that fails rejects the adds of its batch only (their messages are retried).
 */
export interface DurableBatchLimits {
  /** rows that make a batch full: it is written at once */
  maxRows: number;
  /** how long a batch's first item waits for more before the batch is written anyway */
  maxDelayMs: number;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

export class DurableBatcher<T> {
  private items: T[] = [];
  private rows = 0;
  private waiters: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  /** `writeDurably` stores a batch; the adds of the batch resolve once it has resolved. */
  constructor(
    private readonly writeDurably: (items: T[]) => Promise<unknown>,
    private readonly limits: DurableBatchLimits,
    private readonly rowsOf: (item: T) => number = () => 1,
  ) {}

  /** Resolves once the batch holding `item` is durable; rejects if writing that batch failed. */
  add(item: T): Promise<void> {
    this.items.push(item);
    this.rows += this.rowsOf(item);
    const durable = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.rows >= this.limits.maxRows) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.limits.maxDelayMs);
    return durable;
  }

  /** Writes what is collected now (after the writes ahead of it); resolves once every write so far is done. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiters.length === 0) return this.writing;
    const items = this.items;
    const waiters = this.waiters;
    this.items = [];
    this.rows = 0;
    this.waiters = [];
    this.writing = this.writing.then(async () => {
      try {
        await this.writeDurably(items);
        for (const w of waiters) w.resolve();
      } catch (err) {
        for (const w of waiters) w.reject(err as Error);
      }
    });
    return this.writing;
  }
}
