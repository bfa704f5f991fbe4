/**
 * The CDXJ index of a WARC file, `<name>.cdxj` beside `<name>.warc.gz`: written by the sink
 * when it seals the file (from the entries it kept as it appended), and rebuilt from the file
 * itself by `crawl index` and by the repair of a file whose writer died. It is written whole
 * (temporary name, fsync, rename) and only for a sealed file, so an index never points at
 * bytes the file does not hold.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { cdxjEntryOf, cdxjLine, cdxjText } from '../../cdxj.js';
import { readGzipMember } from './repair.js';

export const CDXJ_SUFFIX = '.cdxj';

/** `warc/CRAWL-….warc.gz` → `warc/CRAWL-….cdxj` */
export const cdxjPathOf = (warcPath: string): string => warcPath.replace(/\.warc(\.gz)?$/, '') + CDXJ_SUFFIX;

/** Writes the index whole: a reader sees the old file or the new one, never part of one. */
export async function writeCdxjFile(file: string, lines: readonly string[]): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await fsp.open(tmp, 'w');
  try {
    await fh.writeFile(cdxjText(lines));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fsp.rename(tmp, file);
}

export interface WarcMemberRead {
  offset: number;
  length: number;
  /** the record, gunzipped */
  record: Buffer;
  /** the gzip member as stored (a view of the read buffer: copy it to keep it) */
  member: Buffer;
}

const CHUNK = 4 * 1024 * 1024;

/**
 * The gzip members of a WARC file in order, read in chunks (any file size, memory of a chunk
 * plus the largest record). Stops at the first byte that does not start a whole member (a
 * torn tail); `end` then says where that was.
 */
export async function* warcMembers(file: string, end: { at: number } = { at: 0 }): AsyncGenerator<WarcMemberRead> {
  const fh = await fsp.open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    let buf = Buffer.alloc(0);
    let bufStart = 0; // file offset of buf[0]
    let p = 0;
    let readTo = 0;
    for (;;) {
      const m = p < buf.length ? readGzipMember(buf.subarray(p)) : null;
      if (m) {
        yield { offset: bufStart + p, length: m.length, record: m.data, member: buf.subarray(p, p + m.length) };
        p += m.length;
        end.at = bufStart + p;
        continue;
      }
      if (readTo >= size) break;
      const chunk = Buffer.alloc(Math.min(Math.max(CHUNK, buf.length - p), size - readTo));
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, readTo);
      readTo += bytesRead;
      buf = Buffer.concat([buf.subarray(p), chunk.subarray(0, bytesRead)]);
      bufStart += p;
      p = 0;
      if (bytesRead === 0) break;
    }
  } finally {
    await fh.close();
  }
}

export interface WarcFileIndex {
  lines: string[];
  /** records read */
  records: number;
  /** bytes of whole records (the file's size unless its tail is torn) */
  complete: number;
}

/** The CDXJ lines of every record of a WARC file (unsorted), named by the file's own name. */
export async function indexWarcFile(file: string): Promise<WarcFileIndex> {
  const filename = path.basename(file);
  const end = { at: 0 };
  const lines: string[] = [];
  let records = 0;
  for await (const m of warcMembers(file, end)) {
    records++;
    const entry = cdxjEntryOf(m.record);
    if (entry) lines.push(cdxjLine(entry, { offset: m.offset, length: m.length, filename }));
  }
  return { lines, records, complete: end.at };
}

/** Rebuilds `<name>.cdxj` from the file; returns what it read. */
export async function reindexWarcFile(file: string): Promise<WarcFileIndex> {
  const index = await indexWarcFile(file);
  await writeCdxjFile(cdxjPathOf(file), index.lines);
  return index;
}
