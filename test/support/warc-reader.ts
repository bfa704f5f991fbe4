/**
 * Reads WARC files with webrecorder's warcio.js, an implementation independent of the
 * crawler's writer: what a user's tools would see.
 */
import { createReadStream, readdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { CDXIndexer, WARCParser } from 'warcio';
import { cdxjText } from '../../pipeline/cdxj.js';

export interface ReadRecord {
  type: string;
  uri: string | null;
  id: string;
  offset: number;
  length: number;
  /** lowercased names */
  headers: Map<string, string>;
  /** the payload as warcio returns it (the HTTP body for response records) */
  payload: Uint8Array;
  statusCode: number | null;
}

async function readAll(source: AsyncIterable<Uint8Array> | NodeJS.ReadableStream): Promise<ReadRecord[]> {
  const parser = new WARCParser(source as never);
  const out: ReadRecord[] = [];
  for await (const r of parser) {
    const payload = await r.readFully();
    const headers = new Map<string, string>();
    for (const [k, v] of r.warcHeaders.headers as Map<string, string>) headers.set(k.toLowerCase(), v);
    out.push({
      type: r.warcType ?? '',
      uri: r.warcTargetURI ?? null,
      id: r.warcHeader('WARC-Record-ID') ?? '',
      offset: parser.offset,
      length: parser.recordLength,
      headers,
      payload,
      statusCode: r.httpHeaders ? Number(r.httpHeaders.statusCode) : null,
    });
  }
  return out;
}

export const readWarcFile = (file: string) => readAll(createReadStream(file));
export const readWarcBytes = (bytes: Uint8Array) => readAll(Readable.from([Buffer.from(bytes)]));

export function warcFiles(outDir: string): string[] {
  const dir = path.join(outDir, 'warc');
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.warc.gz')).sort().map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

/** warcio.js's CDXJ of a WARC file (what its `cdx-index --format cdxj` prints), sorted as a CDXJ file is. */
export async function warcioCdxj(file: string): Promise<string> {
  const indexer = new CDXIndexer({ format: 'cdxj' });
  const lines: string[] = [];
  for await (const result of indexer.iterIndex([{ filename: path.basename(file), reader: createReadStream(file) as never }])) lines.push(indexer.serialize(result).trimEnd());
  return cdxjText(lines);
}
