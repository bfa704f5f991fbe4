/**
 * What a user of the archive checks: every WARC file reads to its end with an independent
 * reader (warcio), and every `captures` row's offset and length lead to its record, with
 * the right URL, record id and payload digest; and every WARC file has its CDXJ index, equal
 * to the one warcio.js builds from the file.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { cdxjPathOf } from '../../pipeline/adapters/warc/cdxj-file.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { readWarcFile, warcFiles, warcioCdxj, type ReadRecord } from './warc-reader.js';

export interface ArchiveAudit {
  files: number;
  records: number;
  captures: number;
  /** captures rows in the files, before the view's dedup */
  rawCaptures: number;
  bySubset: Record<string, number>;
}

export async function auditArchive(out: string): Promise<ArchiveAudit> {
  const byPlace = new Map<string, ReadRecord>();
  let records = 0;
  const files = warcFiles(out);
  assert.ok(files.length > 0, 'no WARC files');
  assert.deepEqual(readdirSync(path.join(out, 'warc')).filter((n) => n.endsWith('.open')), [], 'every WARC file is sealed');
  for (const file of files) {
    const recs = await readWarcFile(file);
    assert.ok(recs.length > 0, `${file}: no records`);
    assert.equal(recs[0]!.type, 'warcinfo', `${file} opens with warcinfo`);
    const rel = path.relative(out, file);
    const responses = new Set(recs.filter((r) => r.type === 'response' || r.type === 'revisit').map((r) => r.id));
    for (const r of recs) {
      byPlace.set(`${rel}@${r.offset}`, r);
      // a request or metadata record names its response (a failure has none)
      const to = r.headers.get('warc-concurrent-to');
      if (to !== undefined) assert.ok(responses.has(to), `${rel}@${r.offset}: WARC-Concurrent-To ${to} is in the same file`);
    }
    records += recs.length;
    const index = cdxjPathOf(file);
    assert.ok(existsSync(index), `${rel} has its CDXJ index`);
    assert.equal(readFileSync(index, 'utf8'), await warcioCdxj(file), `${rel}: its CDXJ index is warcio.js's`);
  }

  const db = await openOutputDatabase(out);
  try {
    const rows = (
      await db.run(
        'SELECT url, warc_filename, warc_record_offset, warc_record_length, warc_record_id, warc_type, content_digest, subset, capture_id, fetch_status FROM captures',
      )
    ).rows as Array<[string, string, number, number, string, string, string | null, string, string, number | null]>;
    const bySubset: Record<string, number> = {};
    for (const [url, file, offset, length, id, type, digest, subset, captureId] of rows) {
      bySubset[subset] = (bySubset[subset] ?? 0) + 1;
      const rec = byPlace.get(`${file}@${offset}`);
      assert.ok(rec, `capture ${captureId}: no record at ${file}@${offset}`);
      assert.equal(rec.length, length, `capture ${captureId}: record length`);
      assert.equal(rec.uri, url, `capture ${captureId}: WARC-Target-URI`);
      assert.equal(rec.id, id, `capture ${captureId}: WARC-Record-ID`);
      assert.equal(rec.type, type, `capture ${captureId}: WARC-Type`);
      if (type === 'response') {
        assert.equal(rec.headers.get('warc-payload-digest'), digest, `capture ${captureId}: WARC-Payload-Digest`);
        // and the digest is that of the payload the independent reader returns
        if (!rec.headers.has('warc-truncated')) assert.equal(contentDigest(rec.payload), digest, `capture ${captureId}: payload bytes`);
      }
      if (type === 'revisit' && digest !== null) assert.equal(rec.headers.get('warc-payload-digest'), digest);
    }
    const raw = await db.run('SELECT count(*) FROM raw_captures');
    return { files: files.length, records, captures: rows.length, rawCaptures: Number(raw.rows[0]![0]), bySubset };
  } finally {
    await db.close();
  }
}
