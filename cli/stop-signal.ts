/**
 * SIGINT and SIGTERM ask a long-running command to stop cleanly (in-flight work finishes,
 * outputs flush) instead of killing it: the command polls `requested` or awaits `stopped()`.
 */
export function stopOnSignal() {
  let requested = false;
  // settled by the signal itself, not found by a timer: a crawl that waits on politeness for
  // hours would otherwise wake five times a second to look
  let wake!: () => void;
  const asked = new Promise<void>((resolve) => (wake = resolve));
  const onSignal = () => {
    requested = true;
    wake();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    get requested() {
      return requested;
    },
    /** asks the command to stop as a signal would (something it depends on failed) */
    request(): void {
      onSignal();
    },
    /** resolves once a signal came (or `request()`) */
    stopped(): Promise<void> {
      return asked;
    },
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
