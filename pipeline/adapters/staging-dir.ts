import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A private local directory for files on their way to an object store:
 * `<tmp>/crawl-<kind>-<pid>-<random>`. The staging directories of processes on this machine
 * that died (their pid is gone) are removed first: what they held was never acknowledged,
 * so it is redelivered and written again by someone else.
 */
export async function makeStagingDir(kind: string): Promise<string> {
  const tmp = os.tmpdir();
  const prefix = `crawl-${kind}-`;
  for (const name of await fsp.readdir(tmp).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
      await fsp.rm(path.join(tmp, name), { recursive: true, force: true }).catch(() => undefined);
    }
  }
  return fsp.mkdtemp(path.join(tmp, `${prefix}${process.pid}-`));
}
