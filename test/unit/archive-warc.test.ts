import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import type { ArchivedExchange } from '../../schemas/index.js';
import { contentDigest } from '../../stages/shared/content-identity/content-digest.js';
import { exchangeRecords, PROFILE_IDENTICAL, PROFILE_NOT_MODIFIED } from '../../stages/archive/exchange-records.js';
import { firstCaptureOf } from '../../stages/archive/handle.js';
import { surtKey } from '../../stages/archive/surt.js';
import { OPEN_SUFFIX, WarcFileSink } from '../../pipeline/adapters/warc/file-sink.js';
import { completeLength, gzipMemberLength, repairAbandonedWarcs } from '../../pipeline/adapters/warc/repair.js';
import { readWarcRecord } from '../../pipeline/adapters/warc/read-record.js';
import { readWarcBytes, readWarcFile } from '../support/warc-reader.js';
import { ArchiveSink } from '../../stages/archive/sink.js';
import { createArchiveStage, warcinfoHeader } from '../../stages/archive/index.js';
import { createFakeContext, stageInput } from '../support/fake-context.js';
import { gzipMember, WARC_GZIP_LEVEL } from '../../stages/archive/gzip-member.js';
import { gunzipSync, gzipSync } from 'node:zlib';
import { captureRow } from '../../stages/archive/capture-row.js';
import type { CaptureRow } from '../../schemas/output-tables.js';

const T = Date.UTC(2024, 0, 2, 3, 4, 5);

function exchange(over: Partial<ArchivedExchange> = {}, x: Partial<NonNullable<ArchivedExchange['exchange']>> = {}): ArchivedExchange {
  return {
    v: 1,
    fetch_id: 'f1',
    url: 'http://h01.site.test/a?b=1',
    host: 'h01.site.test',
    domain: 'site.test',
    depth: 1,
    fetch_time: T,
    fetch_status: 200,
    duration_ms: 12,
    content_type: 'text/html',
    charset: 'utf-8',
    headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip', 'content-length': '40' },
    body: Buffer.from('<html><body>hello</body></html>'),
    truncated: false,
    ...over,
    exchange: {
      kind: 'page',
      capture_id: 'f1:0',
      method: 'GET',
      request_headers: [
        ['host', 'h01.site.test'],
        ['user-agent', 'testcrawler/1.0'],
      ],
      status_text: 'OK',
      remote_ip: '127.0.0.1',
      failure: null,
      redirect: null,
      robots: 'allowed',
      refers_to_date: null,
      attempt: 0,
      ...x,
    },
  };
}

describe('archive: SURT keys (cc-index url_surtkey)', () => {
  const cases: Array<[string, string]> = [
    ['http://www.example.com/', 'com,example)/'],
    ['https://Example.COM/A/b.html?z=1&a=2#frag', 'com,example)/a/b.html?a=2&z=1'],
    ['http://h01.site.test:8080/x', 'test,site,h01:8080)/x'],
    ['http://www2.example.co.uk/', 'uk,co,example)/'],
    // as python surt (cc-index, pywb), warcio.js and wabac.js write it
    ['http://127.0.0.1/p', '1,0,0,127)/p'],
    ['http://[::1]:8080/p', '[::1]:8080)/p'],
  ];
  for (const [url, key] of cases) it(`${url} → ${key}`, () => assert.equal(surtKey(url), key));
});

describe('archive: the records of one exchange, read back with warcio', () => {
  it('request, response and metadata; digests right; request and metadata point at the response', async () => {
    const e = exchange();
    const built = await exchangeRecords(e, '<urn:uuid:info>', null);
    const records = await readWarcBytes(Buffer.concat(built.members));
    assert.deepEqual(records.map((r) => r.type), ['request', 'response', 'metadata']);
    const [req, res, meta] = records as [(typeof records)[0], (typeof records)[0], (typeof records)[0]];
    assert.equal(built.main, 1);
    assert.equal(res.id, built.mainRecordId);
    assert.equal(req.headers.get('warc-concurrent-to'), res.id);
    assert.equal(meta.headers.get('warc-concurrent-to'), res.id);
    assert.equal(res.uri, e.url);
    assert.equal(res.headers.get('warc-ip-address'), '127.0.0.1');
    // the payload digest is the pages table's content_digest of the same bytes
    assert.equal(res.headers.get('warc-payload-digest'), contentDigest(e.body));
    assert.equal(built.payloadDigest, contentDigest(e.body));
    assert.deepEqual(Buffer.from(res.payload), e.body);
    assert.equal(res.statusCode, 200);
    // the block digest covers the HTTP head and body as stored
    const raw = await readWarcRecord(writeTmp(built.members), 'f.warc.gz', built.members[0]!.length, built.members[1]!.length);
    assert.equal(raw.headers.get('warc-block-digest'), contentDigest(raw.block));
    // the body is stored decoded: Content-Encoding is kept under another name, Content-Length is the stored length
    const httpHead = raw.block.subarray(0, raw.block.indexOf('\r\n\r\n')).toString();
    assert.match(httpHead, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(httpHead, /\r\nx-crawler-content-encoding: gzip\r\n/);
    assert.doesNotMatch(httpHead, /\r\ncontent-encoding:/);
    assert.match(httpHead, new RegExp(`\\r\\ncontent-length: ${e.body.length}(\\r\\n|$)`));
    assert.match(Buffer.from(meta.payload).toString(), /fetchTimeMs: 12\r\n/);
    assert.match(Buffer.from(req.payload).toString() + req.headers.get('content-type'), /msgtype=request/);
  });

  it('the protocols an exchange went over: WARC-Protocol per protocol and WARC-Cipher-Suite on request and response, the HTTP message in HTTP/1.1 form, fetch_protocol in captures', async () => {
    const e = exchange({ url: 'https://h01.site.test/a' }, { protocols: ['h2', 'tls/1.3'], cipher_suite: 'TLS_AES_256_GCM_SHA384', tls_unverified: 'certificate not verified (--insecure-host): self-signed certificate' });
    const built = await exchangeRecords(e, '<urn:uuid:info>', null);
    const [req, res, meta] = await readWarcBytes(Buffer.concat(built.members));
    // warcio joins a repeated field's values
    for (const r of [req!, res!]) assert.deepEqual([r.headers.get('warc-protocol'), r.headers.get('warc-cipher-suite')], ['h2, tls/1.3', 'TLS_AES_256_GCM_SHA384'], r.type);
    const raw = await readWarcRecord(writeTmp(built.members), 'f.warc.gz', built.members[0]!.length, built.members[1]!.length);
    const head = raw.head.toString();
    assert.match(head, /\r\nWARC-Protocol: h2\r\nWARC-Protocol: tls\/1\.3\r\n/, 'one field per protocol, HTTP first');
    assert.match(raw.block.toString(), /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(res!.statusCode, 200);
    assert.match(Buffer.from(meta!.payload).toString(), /\r\ntlsCertificate: certificate not verified \(--insecure-host\): self-signed certificate\r\n/);
    assert.equal(captureRow(e, built, { filename: 'warc/x.warc.gz', offset: 0, length: 1 }, 'c1').fetch_protocol, 'h2 tls/1.3');
    // plain HTTP says so too; an exchange from before (no protocols) says nothing
    const plain = exchange({}, { protocols: ['http/1.1'] });
    const plainBuilt = await exchangeRecords(plain, '<urn:uuid:info>', null);
    assert.equal((await readWarcBytes(plainBuilt.members[plainBuilt.main]!))[0]!.headers.get('warc-protocol'), 'http/1.1');
    assert.equal((await readWarcBytes((await exchangeRecords(exchange(), '<urn:uuid:info>', null)).members[1]!))[0]!.headers.get('warc-protocol'), undefined);
    assert.equal(captureRow(exchange(), built, { filename: 'warc/x.warc.gz', offset: 0, length: 1 }, 'c1').fetch_protocol, null);
  });

  it('a field the server sent more than once is a line each in the record, as sent', async () => {
    const e = exchange({ headers: { 'content-type': 'text/html', 'x-robots-tag': 'otherbot: nofollow, noindex' }, header_lines: { 'x-robots-tag': ['otherbot: nofollow', 'noindex'] } });
    const built = await exchangeRecords(e, '<urn:uuid:info>', null);
    const raw = await readWarcRecord(writeTmp(built.members), 'f.warc.gz', built.members[0]!.length, built.members[1]!.length);
    const httpHead = raw.block.subarray(0, raw.block.indexOf('\r\n\r\n')).toString();
    assert.match(httpHead, /\r\nx-robots-tag: otherbot: nofollow\r\nx-robots-tag: noindex(\r\n|$)/);
  });

  it('a 304 becomes a server-not-modified revisit referring to the earlier fetch', async () => {
    const e = exchange({ fetch_status: 304, body: Buffer.alloc(0) }, { kind: 'response', status_text: 'Not Modified', refers_to_date: T - 86_400_000 });
    const built = await exchangeRecords(e, '<urn:uuid:info>', null);
    const rec = (await readWarcBytes(built.members[built.main]!))[0]!;
    assert.equal(rec.type, 'revisit');
    assert.equal(rec.headers.get('warc-profile'), PROFILE_NOT_MODIFIED);
    assert.equal(rec.headers.get('warc-refers-to-target-uri'), e.url);
    assert.equal(rec.headers.get('warc-refers-to-date'), new Date(T - 86_400_000).toISOString());
    assert.equal(built.kind, 'revisit-not-modified');
  });

  it('an exact duplicate payload becomes an identical-payload-digest revisit of the first capture', async () => {
    const first = { url: 'http://h02.site.test/same', date: T - 5000, record_id: '<urn:uuid:first>', capture_id: 'f0:0' };
    const built = await exchangeRecords(exchange(), '<urn:uuid:info>', first);
    const rec = (await readWarcBytes(built.members[built.main]!))[0]!;
    assert.equal(rec.type, 'revisit');
    assert.equal(rec.headers.get('warc-profile'), PROFILE_IDENTICAL);
    assert.equal(rec.headers.get('warc-refers-to'), '<urn:uuid:first>');
    assert.equal(rec.headers.get('warc-refers-to-target-uri'), first.url);
    assert.equal(rec.headers.get('warc-payload-digest'), contentDigest(exchange().body));
    assert.equal(rec.payload.length, 0, 'the payload is not stored twice');
  });

  it('a network failure is kept as a request and a metadata record with the reason', async () => {
    const e = exchange({ fetch_status: 0, body: Buffer.alloc(0), headers: {} }, { kind: 'failure', failure: 'connect: connection refused', remote_ip: null });
    const built = await exchangeRecords(e, '<urn:uuid:info>', null);
    const records = await readWarcBytes(Buffer.concat(built.members));
    assert.deepEqual(records.map((r) => r.type), ['request', 'metadata']);
    assert.equal(built.kind, 'metadata');
    assert.equal(records[built.main]!.id, built.mainRecordId);
    assert.match(Buffer.from(records[1]!.payload).toString(), /fetchFailure: connect: connection refused/);
  });
});

describe('archive: a body not downloaded (stopped at the headers)', () => {
  it('a response record with the headers only, WARC-Truncated: unspecified; the metadata says why; the capture row too', async () => {
    const why = 'body not downloaded (Content-Length 67108864 bytes)';
    const e = exchange(
      { content_type: 'video/mp4', charset: null, headers: { 'content-type': 'video/mp4', 'content-length': '67108864' }, body: Buffer.alloc(0) },
      { kind: 'response', body_not_read: why },
    );
    const built = await exchangeRecords(e, '<urn:uuid:info>', null);
    const records = await readWarcBytes(Buffer.concat(built.members));
    assert.deepEqual(records.map((r) => r.type), ['request', 'response', 'metadata']);
    const res = records[built.main]!;
    assert.equal(res.headers.get('warc-truncated'), 'unspecified');
    assert.equal(res.payload.length, 0);
    const raw = await readWarcRecord(writeTmp(built.members), 'f.warc.gz', built.members[0]!.length, built.members[1]!.length);
    const httpHead = raw.block.toString();
    assert.match(httpHead, /\r\nx-crawler-content-length: 67108864\r\n/, 'the length the server declared is kept');
    assert.match(httpHead, /\r\ncontent-length: 0\r\n/);
    assert.ok(Buffer.from(records[2]!.payload).toString().includes(`bodyNotRead: ${why}\r\n`), 'the metadata record says why');
    const row = captureRow(e, built, { filename: 'f.warc.gz', offset: 0, length: 1 }, 'c1');
    assert.equal(row.content_truncated, 'unspecified');
    assert.equal(captureRow(exchange({ truncated: true }), built, { filename: 'f.warc.gz', offset: 0, length: 1 }, 'c1').content_truncated, 'length');
  });
});

describe('archive: identical-payload digests bucket', () => {
  it('the first capture claims a digest; another capture refers to it; its own redelivery gets its record id back', async () => {
    const kv = new MemoryKvStore();
    const a = await firstCaptureOf(kv, exchange());
    assert.equal(a.other, null);
    const b = await firstCaptureOf(kv, exchange({ url: 'http://h02.site.test/copy' }, { capture_id: 'f2:0' }));
    assert.equal(b.other?.record_id, a.recordId);
    assert.equal(b.other?.url, 'http://h01.site.test/a?b=1');
    const again = await firstCaptureOf(kv, exchange());
    assert.deepEqual(again, { other: null, recordId: a.recordId, payloadDigest: contentDigest(exchange().body) });
    const notOk = await firstCaptureOf(kv, exchange({ fetch_status: 404 }, { capture_id: 'f3:0' }));
    assert.equal(notOk.other, null, 'only 2xx payloads are deduplicated');
  });
});

function tmpDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'warc-unit-'));
}

function writeTmp(members: Buffer[]): string {
  const dir = tmpDir();
  writeFileSync(path.join(dir, 'f.warc.gz'), Buffer.concat(members));
  return dir;
}

describe('archive: WARC files', () => {
  it('rotate by size; every file opens with a warcinfo record; placements lead to the records', async () => {
    const dir = tmpDir();
    try {
      const w = new WarcFileSink(dir, { crawlId: 'c1', maxBytes: 4000, fileHeader: warcinfoHeader('c1', 'test') });
      const placed = [];
      for (let i = 0; i < 12; i++) {
        const e = exchange({ url: `http://h01.site.test/p${i}`, body: Buffer.from(`page ${i} `.repeat(40)) }, { capture_id: `f${i}:0` });
        const p = await w.append((info) => exchangeRecords(e, info, null));
        const main = p.built.main;
        placed.push({ url: e.url, file: p.filename, offset: p.offsets[main]!, length: p.lengths[main]! });
      }
      await w.close();
      const all = readdirSync(path.join(dir, 'warc'));
      // each WARC file and its index
      const files = all.filter((f) => !f.endsWith('.cdxj'));
      assert.ok(files.every((f) => /^CRAWL-c1-\d{14}-\d{5}-\d+-[0-9a-f]{6}\.warc\.gz$/.test(f)), files.join(' '));
      assert.equal(all.length, 2 * files.length, all.join(' '));
      assert.ok(files.length >= 3, `expected rotation into several files, got ${files.length}`);
      for (const f of files) {
        const size = statSync(path.join(dir, 'warc', f)).size;
        const records = await readWarcFile(path.join(dir, 'warc', f));
        assert.equal(records[0]!.type, 'warcinfo');
        // a file passes the limit only when a single exchange is bigger than it
        assert.ok(size <= 4000 || records.length === 4, `${f}: ${size} bytes`);
      }
      for (const p of placed) {
        const rec = await readWarcRecord(dir, p.file, p.offset, p.length);
        assert.equal(rec.headers.get('warc-target-uri'), p.url);
        assert.equal(rec.headers.get('warc-type'), 'response');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a build that throws rejects its own append only: nothing of it is written, and the appends after it land', async () => {
    const dir = tmpDir();
    try {
      const w = new WarcFileSink(dir, { crawlId: 'c1', maxBytes: 1 << 20, fileHeader: warcinfoHeader('c1', 'test') });
      const first = await w.append((info) => exchangeRecords(exchange({ url: 'http://h01.site.test/p0' }, { capture_id: 'f0:0' }), info, null));
      // thrown synchronously, as the record builders now are; the file is open, so it is built at once
      const failing = w.append(() => {
        throw new Error('no records for this one');
      });
      const after = w.append((info) => exchangeRecords(exchange({ url: 'http://h01.site.test/p2' }, { capture_id: 'f2:0' }), info, null));
      await assert.rejects(failing, /no records for this one/);
      const last = await after;
      await w.close();
      assert.equal(last.filename, first.filename);
      const records = await readWarcFile(path.join(dir, last.filename));
      assert.deepEqual(
        records.filter((r) => r.type === 'response').map((r) => r.headers.get('warc-target-uri')),
        ['http://h01.site.test/p0', 'http://h01.site.test/p2'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file whose writer died is cut back to its last whole record and sealed; a live writer’s file is left alone', async () => {
    const dir = tmpDir();
    try {
      const w = new WarcFileSink(dir, { crawlId: 'c1', maxBytes: 1 << 20, fileHeader: warcinfoHeader('c1', 'test') });
      for (let i = 0; i < 5; i++) {
        await w.append((info) => exchangeRecords(exchange({ url: `http://h01.site.test/p${i}` }, { capture_id: `f${i}:0` }), info, null));
      }
      await w.sync();
      const name = readdirSync(path.join(dir, 'warc')).find((n) => n.endsWith('.warc.gz'))!;
      const file = path.join(dir, 'warc', name);
      const whole = statSync(file).size;
      // the writer is "killed" in the middle of its last record
      truncateSync(file, whole - 37);
      // the marker names a live process (this test's parent): not touched
      writeFileSync(file + OPEN_SUFFIX, JSON.stringify({ pid: process.ppid, hostname: os.hostname(), started: 0 }));
      assert.deepEqual(await repairAbandonedWarcs(path.join(dir, 'warc')), []);
      // now it names a process that does not exist
      writeFileSync(file + OPEN_SUFFIX, JSON.stringify({ pid: 2 ** 22 + 12345, hostname: os.hostname(), started: 0 }));
      const repaired = await repairAbandonedWarcs(path.join(dir, 'warc'));
      assert.equal(repaired.length, 1);
      assert.ok(repaired[0]!.cutBytes > 0);
      assert.equal(readdirSync(path.join(dir, 'warc')).some((n) => n.endsWith(OPEN_SUFFIX)), false, 'marker removed');
      const records = await readWarcFile(file);
      // warcinfo + 4 whole exchanges (3 records each): the torn fifth exchange lost its metadata record only,
      // since each record is its own member
      assert.equal(records[0]!.type, 'warcinfo');
      assert.equal(records.length, 1 + 4 * 3 + 2);
      assert.equal(statSync(file).size, await completeLength(file));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gzipMemberLength finds whole members only', async () => {
    const b = (await exchangeRecords(exchange(), '<urn:uuid:i>', null)).members[1]!;
    assert.equal(gzipMemberLength(Buffer.concat([b, b])), b.length);
    assert.equal(gzipMemberLength(b.subarray(0, b.length - 1)), null);
    const corrupt = Buffer.from(b);
    corrupt[corrupt.length - 6]! ^= 0xff; // CRC
    assert.equal(gzipMemberLength(corrupt), null);
    assert.equal(gzipMemberLength(Buffer.from('not gzip at all, not gzip at all')), null);
  });
});

describe('archive: gzip members', () => {
  it('each record is one gzip member of its own, the bytes gzipSync makes at the WARC level, whatever its size', () => {
    const records = [10, 4096, 4097, 300_000].map((n, i) => Buffer.from(`record ${i} `.repeat(n).slice(0, n)));
    const members = records.map((r) => gzipMember(r));
    members.forEach((m, i) => {
      assert.deepEqual(m, gzipSync(records[i]!, { level: WARC_GZIP_LEVEL }));
      assert.equal(gzipMemberLength(Buffer.concat([m, m])), m.length, 'a member ends where the next begins');
      assert.deepEqual(gunzipSync(m), records[i]);
    });
  });

  it('--warc-gzip-level: the records of an exchange are compressed at the level asked for, and read back the same', async () => {
    const body = Buffer.from(Array.from({ length: 3000 }, (_, i) => `<p>word${(i * 7919) % 1013} text ${i % 97}</p>`).join('\n'));
    const e = exchange({ body });
    const sizes: number[] = [];
    for (const level of [1, 9]) {
      const built = await exchangeRecords(e, '<urn:uuid:info>', null, '<urn:uuid:r>', undefined, level);
      sizes.push(built.members[built.main]!.length);
      assert.deepEqual(Buffer.from((await readWarcBytes(built.members[built.main]!))[0]!.payload), body);
    }
    assert.ok(sizes[1]! < sizes[0]!, `level 9 smaller than level 1: ${sizes}`);
  });

  it('exchanges appended all at once land in call order, each record naming its own file’s warcinfo across rotations', async () => {
    const dir = tmpDir();
    try {
      const w = new WarcFileSink(dir, { crawlId: 'c1', maxBytes: 20_000, fileHeader: warcinfoHeader('c1', 'test') });
      // bodies of random text (they barely compress), some far over the inline limit, some under
      let seed = 7;
      const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
      const body = (n: number) => Buffer.from(Array.from({ length: n }, () => String.fromCharCode(97 + (rand() % 26))).join(''));
      const es = Array.from({ length: 40 }, (_, i) =>
        exchange({ url: `http://h01.site.test/p${i}`, body: body(i % 3 === 0 ? 9000 : 200) }, { capture_id: `f${i}:0` }),
      );
      // the first opens a file; the others are built at once for it, and rebuilt when they land in a later one
      const first = await w.append((info) => exchangeRecords(es[0]!, info, null));
      const placed = [first, ...(await Promise.all(es.slice(1).map((e) => w.append((info) => exchangeRecords(e, info, null)))))];
      await w.close();
      const files = readdirSync(path.join(dir, 'warc')).filter((n) => n.endsWith('.warc.gz')).sort();
      assert.ok(files.length >= 5, `rotated into ${files.length} files`);
      const order: string[] = [];
      for (const f of files) {
        const records = await readWarcFile(path.join(dir, 'warc', f));
        const info = records[0]!;
        assert.equal(info.type, 'warcinfo');
        for (const r of records.slice(1)) {
          assert.equal(r.headers.get('warc-warcinfo-id'), info.id, `${f}: ${r.type} of ${r.uri}`);
          if (r.type === 'response') order.push(r.uri!);
        }
      }
      assert.deepEqual(order, es.map((e) => e.url), 'the file order is the call order');
      for (const [i, p] of placed.entries()) {
        const rec = await readWarcRecord(dir, p.filename, p.offsets[p.built.main]!, p.lengths[p.built.main]!);
        assert.equal(rec.headers.get('warc-target-uri'), es[i]!.url);
        assert.deepEqual(rec.block.subarray(rec.block.length - es[i]!.body.length), es[i]!.body);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('archive: the sink acks an exchange only once its record and its row are durable', () => {
  it('add resolves after the captures file is written, and the row points at the record', async () => {
    const dir = tmpDir();
    try {
      const warc = new WarcFileSink(dir, { crawlId: 'c1', maxBytes: 1 << 20, fileHeader: warcinfoHeader('c1', 'test') });
      const written: CaptureRow[][] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const sink = new ArchiveSink(warc, { write: async (b) => { await gate; written.push(b.captures ?? []); }, close: async () => {} }, { maxRows: 2, maxDelayMs: 10_000 });
      const e1 = exchange();
      const e2 = exchange({ url: 'http://h01.site.test/b' }, { capture_id: 'f2:0' });
      let resolved = 0;
      const adds = [e1, e2].map((e) =>
        sink
          .add(
            (info) => exchangeRecords(e, info, null),
            (p, built) => captureRow(e, built, { filename: p.filename, offset: p.offsets[built.main]!, length: p.lengths[built.main]! }, 'c1'),
          )
          .then(() => resolved++),
      );
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(resolved, 0, 'nothing is acked while the captures file is not written');
      release();
      await Promise.all(adds);
      assert.equal(written.length, 1);
      assert.deepEqual(written[0]!.map((row) => row.url), [e1.url, e2.url], 'one row per exchange');
      for (const row of written[0]!) {
        const rec = await readWarcRecord(dir, row.warc_filename, row.warc_record_offset, row.warc_record_length);
        assert.equal(rec.headers.get('warc-target-uri'), row.url);
        assert.equal(rec.headers.get('warc-payload-digest'), row.content_digest);
        assert.equal(row.subset, 'warc');
        assert.equal(row.url_surtkey, surtKey(row.url));
      }
      await sink.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('archive: batches as large as the exchanges it handles at once', () => {
  it('with 2 handled at once, a batch of 2 is made durable at once, not when the batch timer ends', async () => {
    const dir = tmpDir();
    try {
      const written: number[] = [];
      const stage = await createArchiveStage({
        warc: new WarcFileSink(dir, { crawlId: 'c1', maxBytes: 1 << 20, fileHeader: warcinfoHeader('c1', 'test') }),
        captures: { write: async (b) => void written.push(b.captures?.length ?? 0), close: async () => {} },
        // a batch timer that never ends in the test: a batch held until it would never be written
        batch: { maxRows: 1000, maxDelayMs: 2 ** 31 - 1 },
        concurrency: 2,
      });
      assert.equal(stage.defaultConcurrency, 2);
      const ctx = createFakeContext();
      const e2 = exchange({ url: 'http://h01.site.test/b' }, { capture_id: 'f2:0' });
      await Promise.all([exchange(), e2].map((e) => stage.handle(stageInput(e), ctx)));
      assert.deepEqual(written, [2]);
      await stage.close?.(ctx);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('archive: a body stored beside its message', () => {
  it('is archived whole: the record has the whole payload and its digest, as if it had come inline', async () => {
    const dir = tmpDir();
    try {
      const rows: CaptureRow[] = [];
      const stage = await createArchiveStage({
        warc: new WarcFileSink(dir, { crawlId: 'c1', maxBytes: 1 << 30, fileHeader: warcinfoHeader('c1', 'test') }),
        captures: { write: async (b) => void rows.push(...(b.captures ?? [])), close: async () => {} },
        batch: { maxRows: 1, maxDelayMs: 10 },
      });
      const ctx = createFakeContext({ maxPayloadBytes: 1024 * 1024 });
      const body = Buffer.from(`<html><body><p>${'a long page of words '.repeat(150_000)}</p></body></html>`);
      const ref = await ctx.bodies.put('crawl.bodies.0', body);
      await stage.handle(stageInput(exchange({ body: new Uint8Array(0), body_ref: ref, headers: { 'content-type': 'text/html' } })), ctx);
      await stage.close?.(ctx);
      assert.equal(rows.length, 1);
      const rec = await readWarcRecord(dir, rows[0]!.warc_filename, rows[0]!.warc_record_offset, rows[0]!.warc_record_length);
      assert.ok(Buffer.from(rec.payload).equals(body), `the whole payload (${rec.payload.length} of ${body.length} bytes)`);
      assert.equal(rec.headers.get('warc-payload-digest'), contentDigest(body));
      assert.equal(rows[0]!.content_digest, contentDigest(body));
      assert.equal(rec.headers.get('warc-truncated'), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
