/**
 * The records of one host out of a WARC file, copied member by member (each record is its
 * own gzip member, so the copy is a valid WARC file without recompressing anything), behind
 * the file's warcinfo record, which they name. Returns the CDXJ lines of the copy, or null
 * when the file holds nothing of the host (no file is left then).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { cdxjEntryOf, cdxjLine } from '../../cdxj.js';
import { warcMembers } from '../warc/cdxj-file.js';

const HEAD_END = Buffer.from('\r\n\r\n');

/** WARC-Target-URI's host (lowercased), or null for a record without one (warcinfo). */
function targetHost(record: Buffer): string | null {
  const end = record.indexOf(HEAD_END);
  const head = record.subarray(0, end < 0 ? Math.min(record.length, 8192) : end).toString('utf8');
  const m = /\r\nWARC-Target-URI:\s*(\S+)/i.exec(head);
  if (!m) return null;
  try {
    return new URL(m[1]!).hostname.toLowerCase();
  } catch {
    return null;
  }
}

export async function copyHostRecords(from: string, to: string, host: string): Promise<string[] | null> {
  const want = host.toLowerCase();
  const filename = path.basename(to);
  const fh = await fsp.open(to, 'w');
  const lines: string[] = [];
  let at = 0;
  let kept = 0;
  let first = true;
  try {
    for await (const m of warcMembers(from)) {
      const isInfo = first && targetHost(m.record) === null;
      first = false;
      if (!isInfo && targetHost(m.record) !== want) continue;
      await fh.write(m.member);
      if (!isInfo) {
        kept++;
        const entry = cdxjEntryOf(m.record);
        if (entry) lines.push(cdxjLine(entry, { offset: at, length: m.length, filename }));
      }
      at += m.length;
    }
  } finally {
    await fh.close();
  }
  if (kept === 0) {
    await fsp.rm(to, { force: true });
    return null;
  }
  return lines;
}
