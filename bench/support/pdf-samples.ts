/** Small PDFs, random bytes and hostile input for the PDF link harvester's tests and its cost bench. */
import { deflateSync } from 'node:zlib';
import { mulberry32 } from '../../testweb/prng.js';

export type Part = string | Buffer;
export const pdfPart = (p: Part): Buffer => (typeof p === 'string' ? Buffer.from(p, 'latin1') : p);

/** A small PDF: each object body is written as `n 0 obj … endobj`; no xref is needed for the harvester. */
export function pdf(...objects: Part[][]): Uint8Array {
  const parts: Buffer[] = [pdfPart('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n')];
  objects.forEach((body, i) => parts.push(pdfPart(`${i + 1} 0 obj\n`), ...body.map(pdfPart), pdfPart('\nendobj\n')));
  parts.push(pdfPart('trailer\n<< /Root 1 0 R >>\n%%EOF\n'));
  return new Uint8Array(Buffer.concat(parts));
}

/** A link annotation object's body. */
export const linkAnnot = (uri: string): Part[] => [`<< /Type /Annot /Subtype /Link /Rect [0 0 100 20] /A << /S /URI /URI ${uri} >> >>`];

/** `n` bytes from a seeded generator: the same bytes for the same seed. */
export function randomBytes(n: number, seed: number): Uint8Array {
  const rnd = mulberry32(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 4) {
    const v = Math.floor(rnd() * 0x100000000);
    out[i] = v & 0xff;
    out[i + 1] = (v >>> 8) & 0xff;
    out[i + 2] = (v >>> 16) & 0xff;
    out[i + 3] = (v >>> 24) & 0xff;
  }
  return out;
}

/** The URL the link annotation after the last deflate bomb of `hostilePdfShapes` points to. */
export const AFTER_THE_BOMB = 'https://after-the-bomb.example/';

/**
 * Input made to make a PDF link harvester slow or greedy: unclosed strings, streams without
 * an end, long runs, many URLs, deflate bombs (the last with a link after it, which must
 * still be found). Built on each call: together they are some tens of MB.
 */
export function hostilePdfShapes(): Array<[name: string, input: Uint8Array]> {
  const bomb = deflateSync(Buffer.alloc(4 * 1024 * 1024)); // 4 KB that inflate to 4 MB
  const bigBomb = deflateSync(Buffer.alloc(24 * 1024 * 1024)); // 24 KB that inflate to 24 MB, past the 5 MB cap
  return [
    ['unclosed /URI strings', pdfPart('/URI ((((('.repeat(1_000_000))],
    ['unclosed hex strings', pdfPart('/URI <4142'.repeat(1_000_000))],
    ['stream keywords without endstream', pdfPart('stream\n'.repeat(1_000_000))],
    ['endstream only', pdfPart('endstream\n'.repeat(1_000_000))],
    ['a long URL-ish run', pdfPart('http://' + 'a'.repeat(5_000_000))],
    ['one URL many times', pdfPart('http://a.example/x '.repeat(300_000))],
    ['many distinct URLs that do not parse', pdfPart(Array.from({ length: 300_000 }, (_, i) => `http://[${i} `).join(''))],
    ['many bombs', pdf(...Array.from({ length: 50 }, () => [`<< /Length ${bomb.length} /Filter /FlateDecode >>\nstream\n`, bomb, '\nendstream']))],
    ['one big bomb', pdf([`<< /Filter /FlateDecode >>\nstream\n`, bigBomb, '\nendstream'], linkAnnot(`(${AFTER_THE_BOMB})`))],
  ];
}
