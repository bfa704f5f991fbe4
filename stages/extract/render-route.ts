/**
 * Which pages extract hands to the render stage: those whose URL matches a `--render`
 * pattern, and with `--render-auto` those that look like an application shell
 * (app-shell.ts). Pure; the patterns arrive as strings (worker threads get plain data).
 */
import { matchesPattern, parseNamedPattern } from '../shared/url-matchers.js';

export interface RenderRouting {
  /** `--render` patterns: glob or /regex/ */
  patterns: readonly string[];
  /** `--render-auto`: also application shells */
  auto: boolean;
}

/** the last pattern list compiled: every page of a crawl has the same one */
let compiled: { key: string; res: RegExp[] } | null = null;

function compile(patterns: readonly string[]): RegExp[] {
  const key = patterns.join('\n');
  if (compiled?.key !== key) compiled = { key, res: patterns.map((p) => parseNamedPattern(p, '--render pattern')) };
  return compiled.res;
}

/** Why the page at `url` is rendered by its URL alone, or null. */
export function renderPatternReason(url: string, patterns: readonly string[]): string | null {
  if (patterns.length === 0) return null;
  const res = compile(patterns);
  for (let i = 0; i < res.length; i++) if (matchesPattern(res[i]!, url)) return `--render ${patterns[i]}`;
  return null;
}
