import { setTimeout as sleep } from 'node:timers/promises';
import type { KvStore, KvWatch, KvWatchEvent } from '../../ports/kv.js';
import type { StageContext } from '../../pipeline/stage.js';

export interface BucketFeed {
  /** Stops the watch; resolves once the feed has handed on its last event. */
  stop(): Promise<void>;
}

/**
 * Retries of an optional watch that cannot be opened back off to this (a denied subject is
 * denied again: one warning a minute, not a second); a required one is retried every second,
 * since the gate waits on it.
 */
const OPTIONAL_REOPEN_MAX_MS = 60_000;
const REOPEN_MS = 1000;

/**
 * Hands every change of a bucket (its present keys first) to `onEvent` for as long as the gate
 * runs. The watch is a gate's only news of what it follows: if it ends (the server went away
 * and the watch could not resume), it is opened again, and its replay of every key loses
 * nothing. If it cannot be opened the first time, the gate does not start; unless the news
 * is `optional` (the gate does without it meanwhile): then that is logged and retried too.
 */
export async function followBucket(
  ctx: StageContext,
  kv: KvStore,
  name: string,
  onEvent: (event: KvWatchEvent) => void,
  options: { optional?: boolean } = {},
): Promise<BucketFeed> {
  let stopping = false;
  // a stop ends the wait before a reopening at once
  const stopped = new AbortController();
  let watch: KvWatch | null = null;
  try {
    watch = await kv.watch();
  } catch (err) {
    if (!options.optional) throw err;
    ctx.log.warn({ err: (err as Error).message }, `opening the watch of the ${name} bucket failed; retrying`);
  }
  const maxWait = options.optional ? OPTIONAL_REOPEN_MAX_MS : REOPEN_MS;
  const feed = (async () => {
    let wait = REOPEN_MS;
    for (;;) {
      if (watch) {
        try {
          for await (const event of watch) onEvent(event);
        } catch (err) {
          ctx.log.warn({ err: (err as Error).message }, `watch of the ${name} bucket failed`);
        }
        if (stopping) return;
        ctx.log.warn(`watch of the ${name} bucket ended; opening it again`);
      }
      try {
        await sleep(wait, undefined, { signal: stopped.signal });
      } catch {
        return; // stopped
      }
      try {
        watch = await kv.watch();
        wait = REOPEN_MS;
        if (stopping) watch.stop(); // stopped while it was being opened
      } catch (err) {
        watch = null;
        wait = Math.min(wait * 2, maxWait);
        ctx.log.warn({ err: (err as Error).message }, `reopening the watch of the ${name} bucket failed; retrying`);
      }
    }
  })();
  return {
    stop() {
      stopping = true;
      stopped.abort();
      watch?.stop();
      return feed;
    },
  };
}
