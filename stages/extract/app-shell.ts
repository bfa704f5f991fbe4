/**
 * Whether fetched HTML is an application shell: a page whose content a script builds, so
 * that without a browser it is stored empty and its links are never found. Read from the
 * one parse extract makes anyway:
 *
 *   fewer than SHELL_MAX_WORDS words of visible text (noscript, head and hidden elements
 *   do not count), at least one script that runs, and at least one empty element a script
 *   could mount the page into (an element with an id, or a custom element, holding nothing
 *   but white space: `<div id="root"></div>`, `<app-root></app-root>`).
 *
 * The word bound keeps pages with content out whatever their scripts do: an article with a
 * `<div id="fb-root">` and ten scripts has hundreds of words. Measured false positives
 * (pages that have their content without a browser, yet match): docs/rendering.md.
 */

export interface ShellSignals {
  /** the page's visible text */
  text: string;
  scripts: number;
  emptyMounts: number;
}

/** Fewer words than this is "little visible text" (a cookie notice, a "Loading…", a footer line). */
export const SHELL_MAX_WORDS = 50;

/** Words in `text`, counted up to `max` (a long page stops early). */
function countWords(text: string, max: number): number {
  const word = /[\p{L}\p{N}]+/gu;
  let n = 0;
  while (n < max && word.exec(text) !== null) n++;
  return n;
}

/** Why the page looks like an application shell, or null when it does not. */
export function appShellReason(s: ShellSignals): string | null {
  if (s.scripts === 0 || s.emptyMounts === 0) return null;
  const words = countWords(s.text, SHELL_MAX_WORDS);
  if (words >= SHELL_MAX_WORDS) return null;
  return `application shell: ${words} words of text, ${s.emptyMounts} empty mount element${s.emptyMounts === 1 ? '' : 's'}, ${s.scripts} script${s.scripts === 1 ? '' : 's'}`;
}
