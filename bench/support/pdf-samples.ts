/** Small PDFs and random bytes for the PDF link harvester's tests and its cost bench. */
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
