/**
 * Whether a process with this pid runs on this host. A process of another user answers
 * EPERM to the probe: it is alive too.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
