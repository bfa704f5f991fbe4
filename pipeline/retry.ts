import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs `step` again, a second apart, while it fails with an error `retryable` accepts and
 * `timeoutMs` has not passed since the first try; then the last error is thrown. For state
 * the servers cannot take while they elect a leader (a few seconds after a server is lost).
 */
export async function retryFor<T>(
  step: () => Promise<T>,
  timeoutMs: number,
  opts: { retryable?: (err: unknown) => boolean; onRetry?: (why: string) => void } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await step();
    } catch (err) {
      if (!(opts.retryable?.(err) ?? true) || Date.now() > deadline) throw err;
      opts.onRetry?.((err as Error).message);
      await sleep(1000);
    }
  }
}
