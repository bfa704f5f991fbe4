// The bare pages of the test web's special hosts (traps, ID-routed sites, large pages): a title,
// a heading, a body, links in a list and filler words of their own, with nothing around them.
import { randInt, type Rng } from './prng.js';
import { escapeHtml } from './render-page.js';
import { WORDS } from './words.js';

export function plainPage(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>\n${body}\n</body></html>\n`;
}

export const linkList = (hrefs: Array<[href: string, text: string]>) => `<ul>${hrefs.map(([h, t]) => `<li><a href="${escapeHtml(h)}">${escapeHtml(t)}</a></li>`).join('')}</ul>`;

/** `n` English words drawn by `rng`. */
export function englishWords(rng: Rng, n: number): string {
  const list = WORDS.en;
  return Array.from({ length: n }, () => list[randInt(rng, 0, list.length - 1)]).join(' ');
}
