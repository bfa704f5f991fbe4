/**
 * A value that is slow to read (a scan of every busy host), kept fresh in the background for
 * a reader that must answer quickly (a metrics scrape). The first call waits for the first
 * read; after that a call answers at once with the last value read, and starts a new read when
 * that value is older than `maxAgeMs`, counted from the end of the read, so reads never
 * overlap and a read that takes longer than `maxAgeMs` still leaves the crawl `maxAgeMs`
 * between two. A read that fails keeps the last value (it is tried again at the next call
 * after `maxAgeMs`); only the first read's failure reaches the caller.
 */
export function refreshedInBackground<T>(read: () => Promise<T>, o: { maxAgeMs: number; now?: () => number; onError?: (err: Error) => void }): () => Promise<T> {
  const now = o.now ?? Date.now;
  let last: { value: T } | null = null;
  let readAt = -Infinity;
  let reading: Promise<T> | null = null;
  const start = (): Promise<T> => {
    reading = read()
      .then((value) => {
        last = { value };
        return value;
      })
      .finally(() => {
        readAt = now();
        reading = null;
      });
    return reading;
  };
  return async () => {
    if (last === null) return reading ?? start();
    if (!reading && now() - readAt > o.maxAgeMs) start().catch((err: Error) => o.onError?.(err));
    return last.value;
  };
}
