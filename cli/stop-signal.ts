import { setTimeout as sleep } from 'node:timers/promises';

/**
 * SIGINT and SIGTERM ask a long-running command to stop cleanly (in-flight work finishes,
 * outputs flush) instead of killing it: the command polls `requested` or awaits `stopped()`.
 */
export function stopOnSignal() {
  let requested = false;
  const onSignal = () => {
    requested = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    get requested() {
      return requested;
    },
    /** asks the command to stop as a signal would (something it depends on failed) */
    request(): void {
      requested = true;
    },
    /** resolves once a signal came */
    async stopped(): Promise<void> {
      while (!requested) await sleep(200);
    },
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
