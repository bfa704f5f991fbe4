import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ArchivedExchange } from '../../schemas/index.js';
import { exchangeRecords } from '../../stages/archive/exchange-records.js';
import { renderedRecords } from '../../stages/archive/rendered-records.js';
import { warcinfoHeader } from '../../stages/archive/index.js';
import { OPEN_SUFFIX, WarcFileSink } from '../../pipeline/adapters/warc/file-sink.js';
import { repairAbandonedWarcs } from '../../pipeline/adapters/warc/repair.js';
import { cdxjPathOf, reindexWarcFile } from '../../pipeline/adapters/warc/cdxj-file.js';
import { mergeCdxjFiles } from '../../pipeline/adapters/export/cdxj-merge.js';
import { readWarcFile, warcioCdxj } from '../support/warc-reader.js';

const T = Date.UTC(2024, 0, 2, 3, 4, 5, 678);

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
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: Buffer.from('<html><body>hello</body></html>'),
    truncated: false,
    ...over,
    exchange: {
      kind: 'page',
      capture_id: 'f1:0',
      method: 'GET',
      request_headers: [['host', 'h01.site.test']],
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

/** Every kind of record the archive writes: a page, a 304, a duplicate payload, a redirect, a 404, a network failure, a robots.txt, a host by address, a rendered DOM. */
const EXCHANGES: Array<(info: string) => ReturnType<typeof exchangeRecords>> = [
  (info) => exchangeRecords(exchange(), info, null),
  (info) => exchangeRecords(exchange({ url: 'http://h01.site.test/b', fetch_status: 304, body: Buffer.alloc(0) }, { status_text: 'Not Modified', refers_to_date: T - 1000 }), info, null),
  (info) =>
    exchangeRecords(exchange({ url: 'http://www.h02.site.test/copy', fetch_time: T + 61_000 }, { capture_id: 'f3:0' }), info, { url: 'http://h01.site.test/a?b=1', date: T, record_id: '<urn:uuid:first>', capture_id: 'f1:0' }),
  (info) => exchangeRecords(exchange({ url: 'http://h01.site.test/old', fetch_status: 301, headers: { location: '/new' }, body: Buffer.alloc(0) }, { status_text: 'Moved Permanently', redirect: 'http://h01.site.test/new' }), info, null),
  (info) => exchangeRecords(exchange({ url: 'http://h03.site.test:8080/missing?z=2&a=1', fetch_status: 404, headers: { 'content-type': 'text/plain' }, body: Buffer.from('no') }, { status_text: 'Not Found' }), info, null),
  (info) => exchangeRecords(exchange({ url: 'http://h04.site.test/down', fetch_status: 0, body: Buffer.alloc(0) }, { kind: 'failure', failure: 'connection refused' }), info, null),
  (info) => exchangeRecords(exchange({ url: 'http://h01.site.test/robots.txt', headers: { 'content-type': 'text/plain' }, body: Buffer.from('User-agent: *\nAllow: /\n') }, { kind: 'robots', capture_id: 'robots:1' }), info, null),
  (info) => exchangeRecords(exchange({ url: 'http://127.0.0.1:8080/by-address' }, { capture_id: 'f9:0' }), info, null),
  (info) => renderedRecords(exchange({ url: 'http://h01.site.test/app', body: Buffer.from('<html><body>rendered</body></html>') }, { kind: 'rendered' }), info, '<urn:uuid:response>'),
];

const tmpDir = () => mkdtempSync(path.join(os.tmpdir(), 'cdxj-'));

async function writeWarc(dir: string, maxBytes = 1 << 20, maxRecords?: number): Promise<string[]> {
  const w = new WarcFileSink(dir, { crawlId: 'c1', maxBytes, ...(maxRecords ? { maxRecords } : {}), fileHeader: warcinfoHeader('c1', 'test') });
  for (const build of EXCHANGES) await w.append(build);
  await w.close();
  return readdirSync(path.join(dir, 'warc')).filter((n) => n.endsWith('.warc.gz')).sort().map((n) => path.join(dir, 'warc', n));
}

describe('CDXJ index of the WARC files', () => {
  it('the index the archive writes as it seals a file equals warcio.js’s, line for line (keys, timestamps, url, mime, status, digest, offset, length, filename)', async () => {
    const dir = tmpDir();
    try {
      const [file] = await writeWarc(dir);
      const ours = readFileSync(cdxjPathOf(file!), 'utf8');
      const theirs = await warcioCdxj(file!);
      assert.equal(ours, theirs);
      const lines = ours.trimEnd().split('\n');
      // response, 304 revisit, identical revisit, 301, 404, robots.txt, a host by address, conversion: not the requests, metadata, warcinfo or the failure
      assert.equal(lines.length, 8);
      assert.ok(lines.some((l) => l.startsWith('1,0,0,127:8080)/by-address ')), 'an address is reversed, as replay looks it up');
      assert.deepEqual(lines, [...lines].sort(), 'sorted');
      const page = lines.find((l) => l.startsWith('test,site,h01)/a?b=1 '))!;
      assert.match(page, /^test,site,h01\)\/a\?b=1 20240102030405 \{"url":"http:\/\/h01\.site\.test\/a\?b=1","mime":"text\/html","status":"200","digest":"[A-Z2-7]{32}","length":"\d+","offset":"\d+","filename":"CRAWL-c1-[^"]+\.warc\.gz"\}$/);
      assert.match(lines.find((l) => l.includes('/copy'))!, /^test,site,h02\)\/copy \d{14} \{"url":"http:\/\/www\.h02\.site\.test\/copy","mime":"warc\/revisit","status":"200","digest":/);
      assert.match(lines.find((l) => l.includes('"/b') || l.includes(')/b '))!, /"mime":"warc\/revisit","status":"304"/);
      assert.match(lines.find((l) => l.startsWith('test,site,h03:8080)/missing?a=1&z=2 '))!, /"status":"404"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a file is sealed at its record limit whatever its size, so the open file\'s index held in memory stays bounded', async () => {
    const dir = tmpDir();
    try {
      const files = await writeWarc(dir, 1 << 30, 6);
      assert.ok(files.length >= 3, `files: ${files.length}`);
      let indexed = 0;
      for (const file of files) {
        const records = (await readWarcFile(file)).filter((r) => r.type !== 'warcinfo');
        assert.ok(records.length <= 6, `${path.basename(file)}: ${records.length} records`);
        indexed += readFileSync(cdxjPathOf(file), 'utf8').trimEnd().split('\n').filter(Boolean).length;
      }
      assert.equal(indexed, 8, 'every indexed record is in one of the files');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one index per WARC file, each naming its own file; crawl index rebuilds the same bytes from the WARC file', async () => {
    const dir = tmpDir();
    try {
      const files = await writeWarc(dir, 3000);
      assert.ok(files.length >= 3, `small files rotate: ${files.length}`);
      for (const file of files) {
        const written = readFileSync(cdxjPathOf(file), 'utf8');
        assert.equal(written, await warcioCdxj(file), path.basename(file));
        for (const line of written.trimEnd().split('\n').filter(Boolean)) assert.equal(JSON.parse(line.slice(line.indexOf('{'))).filename, path.basename(file));
        rmSync(cdxjPathOf(file));
        await reindexWarcFile(file);
        assert.equal(readFileSync(cdxjPathOf(file), 'utf8'), written);
      }
      // the indexes merged into one (a WACZ's): every line once, in sort order
      const all = files.flatMap((f) => readFileSync(cdxjPathOf(f), 'utf8').trimEnd().split('\n').filter(Boolean));
      const merged = path.join(dir, 'all.cdxj');
      assert.equal(await mergeCdxjFiles(files.map(cdxjPathOf), merged), all.length);
      assert.deepEqual(readFileSync(merged, 'utf8').trimEnd().split('\n'), [...all].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the open file has no index; a file whose writer died gets one of its whole records only when it is sealed', async () => {
    const dir = tmpDir();
    try {
      const w = new WarcFileSink(dir, { crawlId: 'c1', maxBytes: 1 << 20, fileHeader: warcinfoHeader('c1', 'test') });
      for (let i = 0; i < 4; i++) await w.append((info) => exchangeRecords(exchange({ url: `http://h01.site.test/p${i}` }, { capture_id: `f${i}:0` }), info, null));
      await w.sync();
      const name = readdirSync(path.join(dir, 'warc')).find((n) => n.endsWith('.warc.gz'))!;
      const file = path.join(dir, 'warc', name);
      assert.equal(readdirSync(path.join(dir, 'warc')).some((n) => n.endsWith('.cdxj')), false, 'no index while the file is written');
      // "killed" inside its last exchange's response record: the index must not name it
      const members = (await exchangeRecords(exchange({ url: 'http://h01.site.test/p3' }), '<urn:uuid:x>', null)).members;
      truncateSync(file, statSync(file).size - members[2]!.length - 40);
      writeFileSync(file + OPEN_SUFFIX, JSON.stringify({ pid: 2 ** 22 + 12345, hostname: os.hostname(), started: 0 }));
      await repairAbandonedWarcs(path.join(dir, 'warc'));
      const index = readFileSync(cdxjPathOf(file), 'utf8');
      assert.equal(index, await warcioCdxj(file));
      assert.deepEqual(
        index.trimEnd().split('\n').map((l) => l.split(' ')[0]),
        ['test,site,h01)/p0', 'test,site,h01)/p1', 'test,site,h01)/p2'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
