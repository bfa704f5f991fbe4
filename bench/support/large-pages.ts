/** Pages rows with as much text as real pages have, for tests and scripts about memory. */
import type { PageRow } from '../../schemas/output-tables.js';
import { page } from './output-rows.js';

/** A fixed vocabulary of made-up words: text that compresses about as well as prose (zstd ~3x), not to nothing. */
const WORDS: string[] = (() => {
  let s = 12345;
  const next = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0);
  const letters = 'etaoinshrdlcumwfgypbvkjxqz';
  return Array.from({ length: 4000 }, () => {
    const n = 2 + (next() % 9);
    let w = '';
    for (let i = 0; i < n; i++) w += letters[Math.min(25, Math.floor(((next() >>> 8) % 1000) ** 2 / 40_000))];
    return w;
  });
})();

function prose(seed: number, bytes: number): string {
  let s = seed >>> 0 || 1;
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    const w = WORDS[s % WORDS.length]!;
    parts.push(w);
    n += w.length + 1;
  }
  return parts.join(' ').slice(0, bytes);
}

/** `page(i)` with about `textBytes` of text: 40% in `text` (the main text), 60% in `text_full`. */
export function pageWithText(i: number, textBytes: number, over: Partial<PageRow> = {}): PageRow {
  const main = Math.floor(textBytes * 0.4);
  return page(i, { text: prose(i * 2 + 1, main), text_full: prose(i * 2 + 2, textBytes - main), ...over });
}
