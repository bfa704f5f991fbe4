/**
 * One sorted CDXJ file from many sorted ones (each WARC file's index): a k-way merge that
 * holds one line per input, so a crawl of any size merges in little memory.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import readline from 'node:readline';
import { compareCdxj } from '../../cdxj.js';

interface Head {
  line: string;
  source: AsyncIterator<string>;
}

/** A binary min-heap of the inputs' current lines. */
class Heads {
  private readonly a: Head[] = [];
  get size(): number {
    return this.a.length;
  }
  push(h: Head): void {
    const a = this.a;
    a.push(h);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (compareCdxj(a[p]!.line, a[i]!.line) <= 0) break;
      [a[p], a[i]] = [a[i]!, a[p]!];
      i = p;
    }
  }
  pop(): Head {
    const a = this.a;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && compareCdxj(a[l]!.line, a[m]!.line) < 0) m = l;
        if (r < a.length && compareCdxj(a[r]!.line, a[m]!.line) < 0) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }
}

async function nextLine(source: AsyncIterator<string>): Promise<string | null> {
  for (;;) {
    const r = await source.next();
    if (r.done) return null;
    if (r.value !== '') return r.value;
  }
}

/** Merges sorted CDXJ files into `out`; `keep` may drop lines (another host's). Returns the lines written. */
export async function mergeCdxjFiles(inputs: readonly string[], out: string, keep: (line: string) => boolean = () => true): Promise<number> {
  const heads = new Heads();
  for (const file of inputs) {
    const source = readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity })[Symbol.asyncIterator]();
    const line = await nextLine(source);
    if (line !== null) heads.push({ line, source });
  }
  const w = createWriteStream(out);
  let written = 0;
  while (heads.size > 0) {
    const h = heads.pop();
    if (keep(h.line)) {
      written++;
      if (!w.write(h.line + '\n')) await once(w, 'drain');
    }
    const line = await nextLine(h.source);
    if (line !== null) heads.push({ line, source: h.source });
  }
  w.end();
  await once(w, 'finish');
  return written;
}
