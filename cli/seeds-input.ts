import { readFileSync } from 'node:fs';
import { canonicalize } from '../stages/normalize/canonical-url.js';
import { UsageError } from './usage-error.js';

export interface SeedList {
  urls: string[];
  /** lines of a seeds file that are not valid URLs, with why */
  rejected: Array<{ line: number; text: string; reason: string }>;
}

/**
 * Seeds from --seed (each must be valid: a bad one is a usage error) and from --seeds-file
 * (one URL a line, `#` comments; an invalid line is reported and skipped, the rest crawled).
 */
export function readSeeds(seedArgs: readonly string[], seedsFile: string | undefined): SeedList {
  const urls: string[] = [];
  const rejected: SeedList['rejected'] = [];
  for (const s of seedArgs) {
    const r = canonicalize(s);
    if (!r.ok) throw new UsageError(`invalid --seed "${s}": ${r.reason}: ${r.detail}`);
    urls.push(r.url);
  }
  if (seedsFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(seedsFile, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read seeds file ${seedsFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    text.split(/\r?\n/).forEach((raw, i) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const r = canonicalize(line);
      if (r.ok) urls.push(r.url);
      else rejected.push({ line: i + 1, text: line.slice(0, 200), reason: `${r.reason}: ${r.detail}` });
    });
  }
  return { urls: [...new Set(urls)], rejected };
}
