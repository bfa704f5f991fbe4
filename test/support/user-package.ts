import { cpSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** the repository (tests run from dist/test/support/) */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * A package of a user's own, as `npm install` leaves it: a copy of `source` (a folder of the
 * repository) in a temporary directory, whose node_modules links the crawler (what a `file:`
 * dependency on it makes) and the other packages named; its modules import the crawler by
 * its package name, through package.json `exports`. The caller removes the directory.
 */
export function installedPackage(source: string, packages: readonly string[] = []): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `${path.basename(source)}-`));
  cpSync(path.join(REPO, source), dir, { recursive: true });
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(REPO, path.join(dir, 'node_modules', 'jetstream-crawler'), 'dir');
  for (const p of packages) symlinkSync(path.join(REPO, 'node_modules', p), path.join(dir, 'node_modules', p), 'dir');
  return dir;
}
