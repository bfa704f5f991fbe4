/**
 * Repair of WARC files whose writer died: the file is cut back to the end of its last
 * complete gzip member (a record written whole), fsynced, its CDXJ index rebuilt from what
 * is left (the writer kept its entries in memory), and its `.open` marker removed.
 * A record cut off by the kill was never acked, so its exchange is redelivered and written
 * again elsewhere; nothing a `captures` row points to is ever cut (rows are written only
 * after the WARC is fsynced).
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { OPEN_SUFFIX, type WriterMarker } from './file-sink.js';
import { processAlive } from '../../process-alive.js';
import { cdxjPathOf, indexWarcFile, writeCdxjFile } from './cdxj-file.js';

const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;

/** The complete, CRC-checked gzip member at the start of `buf`: its length and what it inflates to; null if there is none. */
export function readGzipMember(buf: Buffer): { length: number; data: Buffer } | null {
  if (buf.length < 18 || buf[0] !== 0x1f || buf[1] !== 0x8b || buf[2] !== 8) return null;
  const flags = buf[3]!;
  let p = 10;
  if (flags & FEXTRA) {
    if (buf.length < p + 2) return null;
    p += 2 + buf.readUInt16LE(p);
  }
  for (const f of [FNAME, FCOMMENT]) {
    if (flags & f) {
      const z = buf.indexOf(0, p);
      if (z < 0) return null;
      p = z + 1;
    }
  }
  if (flags & FHCRC) p += 2;
  if (p >= buf.length) return null;
  let inflated: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    inflated = zlib.inflateRawSync(buf.subarray(p), { info: true }) as unknown as typeof inflated;
  } catch {
    return null; // cut short (or corrupt)
  }
  const end = p + inflated.engine.bytesWritten;
  if (buf.length < end + 8) return null;
  const crc = buf.readUInt32LE(end);
  const isize = buf.readUInt32LE(end + 4);
  if (crc !== zlib.crc32(inflated.buffer) || isize !== (inflated.buffer.length >>> 0)) return null;
  return { length: end + 8, data: inflated.buffer };
}

/** Length of the complete, CRC-checked gzip member at the start of `buf`, or null if there is none. */
export function gzipMemberLength(buf: Buffer): number | null {
  return readGzipMember(buf)?.length ?? null;
}

/** Offset just past the last complete member of the file: where a torn tail starts (= size when none). */
export async function completeLength(file: string): Promise<number> {
  const fh = await fsp.open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    let pos = 0;
    let window = 4 * 1024 * 1024;
    while (pos < size) {
      const len = Math.min(window, size - pos);
      const buf = Buffer.alloc(len);
      await fh.read(buf, 0, len, pos);
      const member = gzipMemberLength(buf);
      if (member !== null) {
        pos += member;
        window = 4 * 1024 * 1024;
      } else if (pos + len < size) {
        window *= 2; // the member may just be longer than the window
      } else {
        break; // the rest of the file is no complete member: a torn tail
      }
    }
    return pos;
  } finally {
    await fh.close();
  }
}

function writerAlive(m: WriterMarker): boolean {
  if (m.hostname !== os.hostname()) return true; // cannot tell from here: left to a process on that host
  if (m.pid === process.pid) return false;
  return processAlive(m.pid);
}

export interface Repaired {
  file: string;
  cutBytes: number;
}

/** Seals every file in `dir` whose writer is dead; returns what was cut. */
export async function repairAbandonedWarcs(dir: string): Promise<Repaired[]> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: Repaired[] = [];
  for (const n of names) {
    if (n.endsWith(OPEN_SUFFIX + '.tmp')) {
      // a marker its writer never renamed (killed between the two steps): it never opened the file
      const p = path.join(dir, n);
      const age = await fsp.stat(p).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > 60_000) await fsp.rm(p, { force: true });
      continue;
    }
    if (!n.endsWith(OPEN_SUFFIX)) continue;
    const markerPath = path.join(dir, n);
    const file = markerPath.slice(0, -OPEN_SUFFIX.length);
    let marker: WriterMarker;
    try {
      marker = JSON.parse(await fsp.readFile(markerPath, 'utf8')) as WriterMarker;
    } catch {
      continue; // already gone (sealed by another process)
    }
    if (writerAlive(marker)) continue;
    const size = await fsp.stat(file).then((s) => s.size, () => null);
    let cut = 0;
    if (size !== null) {
      // one pass finds where the whole records end and indexes them
      const index = await indexWarcFile(file);
      const keep = index.complete;
      cut = size - keep;
      if (keep === 0) {
        await fsp.rm(file, { force: true }); // not even its warcinfo made it
      } else {
        if (cut > 0) await fsp.truncate(file, keep);
        const fh = await fsp.open(file, 'r+');
        await fh.sync();
        await fh.close();
        await writeCdxjFile(cdxjPathOf(file), index.lines);
      }
    }
    await fsp.rm(markerPath, { force: true });
    out.push({ file, cutBytes: cut });
  }
  return out;
}
