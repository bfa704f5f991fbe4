/**
 * A value that is slow to read (a scan of every busy host), kept fresh in the background for
 * a reader that must answer at once (a metrics scrape). Nothing is read until the first call
 * (a process nobody scrapes never scans). A call answers with the last value read (undefined
 * until the first read ends) and starts a new read when that value is older than `maxAgeMs`,
 * counted from the end of the last read, so reads never overlap and a read that takes longer
 * than `maxAgeMs` still leaves `maxAgeMs` between two. A read that fails keeps the last value
 * and goes to `onError`; the next call after `maxAgeMs` tries again.
 *
 * `maxBusyShare` bounds the share of the time spent reading: a read that took D ms is followed
 * by at least D × (1 / share − 1) ms without one (more than `maxAgeMs` when D is long). A scan
 * whose length grows with the crawl (every busy host) then costs a fixed share of the servers'
 * work, not more and more of it; the value is older in proportion.
 */
export function refreshedInBackground<T>(read: () => Promise<T>, o: { maxAgeMs: number; maxBusyShare?: number; now?: () => number; onError?: (err: Error) => void }): () => T | undefined {
  const now = o.now ?? Date.now;
  let last: { value: T } | undefined;
  let readAt = -Infinity;
  /** how long after `readAt` the next read may start */
  let restMs = o.maxAgeMs;
  let reading = false;
  const start = () => {
    reading = true;
    const startedAt = now();
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
        restMs = o.maxBusyShare ? Math.max(o.maxAgeMs, (readAt - startedAt) * (1 / o.maxBusyShare - 1)) : o.maxAgeMs;
        reading = false;
      });
  };
  return () => {
    if (!reading && now() - readAt > restMs) start();
    return last?.value;
  };
}
