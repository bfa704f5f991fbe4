import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Runs a full garbage collection now, where node was not started with --expose-gc.
 * `gc` is exposed for a fresh context only and then hidden again. False where the runtime
 * refused (the caller carries on: this only frees memory sooner).
 */
export function collectGarbage(): boolean {
  let gc: unknown;
  try {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc');
  } catch {
    return false;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  if (typeof gc !== 'function') return false;
  gc();
  return true;
}
