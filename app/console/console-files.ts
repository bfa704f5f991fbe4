import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiAnswer } from '../service/job-api.js';

/**
 * The console's files are plain HTML, CSS and JavaScript kept in app/console/assets/ (no build
 * step, nothing fetched from elsewhere). The package ships its source folders, so the built
 * module (dist/app/console/) finds them three folders up, and a run from source beside it.
 */
function assetsDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, 'assets'), path.resolve(here, '../../../app/console/assets')];
  const found = candidates.find((d) => existsSync(path.join(d, 'index.html')));
  if (!found) throw new Error(`the console's files are missing: looked in ${candidates.join(', ')}`);
  return found;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Only the console's own files run on its pages: no inline script, nothing from another origin, no framing. */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  // not no-referrer: with it, Chromium sends a form's post with Origin: null, which the cross-site check refuses
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** The console's files, read once at start: `/` is index.html, `/console/<name>` the rest. */
export class ConsoleFiles {
  private readonly files = new Map<string, Buffer>();

  constructor(dir = assetsDir()) {
    for (const name of readdirSync(dir)) {
      if (TYPES[path.extname(name)]) this.files.set(name, readFileSync(path.join(dir, name)));
    }
  }

  /** The answer for a path of the console, or null when the path is not one. `signedIn`: the page offers to sign out. */
  answer(urlPath: string, signedIn: boolean): ApiAnswer | null {
    const name = urlPath === '/' ? 'index.html' : urlPath.startsWith('/console/') ? urlPath.slice('/console/'.length) : null;
    if (name === null) return null;
    const data = this.files.get(name);
    if (!data) return { status: 404, body: { error: { field: 'path', reason: `no console file ${name}` } } };
    const out = name === 'index.html' && signedIn ? Buffer.from(data.toString('utf8').replace('data-signed-in="no"', 'data-signed-in="yes"')) : data;
    return { status: 200, body: null, raw: { contentType: TYPES[path.extname(name)]!, data: out, headers: SECURITY_HEADERS } };
  }
}
