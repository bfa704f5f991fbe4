/**
 * A value that is slow to read (a scan of every busy host), kept fresh in the background for
 * a reader that must answer at once (a metrics scrape). Nothing is read until the first call
 * (a process nobody scrapes never scans). A call answers with the last value read (undefined
 * until the first read ends) and starts a new read when that value is older than `maxAgeMs`,
 * counted from the end of the last read, so reads never overlap and a read that takes longer
 * than `maxAgeMs` still leaves `maxAgeMs` between two. A read that fails keeps the last value
 * and goes to `onError`; the next call after `maxAgeMs` tries again.
 */
export function refreshedInBackground<T>(read: () => Promise<T>, o: { maxAgeMs: number; now?: () => number; onError?: (err: Error) => void }): () => T | undefined {
  const now = o.now ?? Date.now;
  let last: { value: T } | undefined;
  let readAt = -Infinity;
  let reading = false;
  const start = () => {
    reading = true;
    let pending: Promise<T>;
    try {
      pending = read();
    } catch (err) {
      // a read that throws before its promise (not an async function) still ends
      pending = Promise.reject(err as Error);
    }
    pending
      .then(
        (value) => (last = { value }),
        (err: Error) => o.onError?.(err),
      )
      .finally(() => {
        readAt = now();
        reading = false;
      });
  };
  return () => {
    if (!reading && now() - readAt > o.maxAgeMs) start();
    return last?.value;
  };
}
