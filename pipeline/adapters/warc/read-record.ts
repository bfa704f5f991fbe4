/**
 * Reading a record back from a local WARC file, as `crawl get` does with what a `captures` row
 * points to. The records are written by the archive stage (stages/archive/warc-record.ts); this
 * side needs only the WARC framing: a version line, header lines, a blank line, the block.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

export interface WarcRecordRead {
  /** the record's header lines, as stored */
  head: string;
  headers: Map<string, string>;
  block: Buffer;
  /** the HTTP payload (body) of a response or revisit record; the whole block otherwise */
  payload: Buffer;
  /** the gunzipped record, byte for byte */
  raw: Buffer;
}

/** Reads the record a `captures` row points to: `length` bytes at `offset` are one gzip member. */
export async function readWarcRecord(outDir: string, warcFilename: string, offset: number, length: number): Promise<WarcRecordRead> {
  const file = path.resolve(outDir, warcFilename);
  const fh = await fsp.open(file, 'r');
  let member: Buffer;
  try {
    member = Buffer.alloc(length);
    const { bytesRead } = await fh.read(member, 0, length, offset);
    if (bytesRead !== length) throw new Error(`reading ${warcFilename}: ${bytesRead} of ${length} bytes at offset ${offset} (file cut short?)`);
  } finally {
    await fh.close();
  }
  let raw: Buffer;
  try {
    raw = zlib.gunzipSync(member);
  } catch (err) {
    throw new Error(`reading ${warcFilename} at offset ${offset}: not a gzip member (${(err as Error).message})`, { cause: err });
  }
  return parseWarcRecord(raw);
}

export function parseWarcRecord(raw: Buffer): WarcRecordRead {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0 || !raw.subarray(0, 5).equals(Buffer.from('WARC/'))) throw new Error('not a WARC record');
  const head = raw.subarray(0, end).toString('utf8');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  const length = Number(headers.get('content-length') ?? '0');
  const block = raw.subarray(end + 4, end + 4 + length);
  let payload = block;
  if ((headers.get('content-type') ?? '').startsWith('application/http')) {
    const httpEnd = block.indexOf('\r\n\r\n');
    payload = httpEnd < 0 ? Buffer.alloc(0) : block.subarray(httpEnd + 4);
  }
  return { head, headers, block, payload, raw };
}
