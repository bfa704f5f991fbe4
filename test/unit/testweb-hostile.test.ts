// The hostile host of the test web, over real HTTP on loopback (node:http and raw sockets).
// Every read is bounded in time and bytes, so a misbehaving path can't hang the test or
// blow its memory: endless bodies are read for a moment, bombs are inflated a few MB.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { createHash } from 'node:crypto';
import { createBrotliDecompress, createGunzip, inflateSync, type BrotliDecompress, type Gunzip } from 'node:zlib';
import {
  BAD_CHUNK_SIZE_LINE,
  BIG_HEADERS_COUNT,
  BIG_HEADERS_MIN_BYTES,
  CHARSET_PAGES,
  CL_LONG_DECLARED,
  CL_LONG_SENT,
  CL_SHORT_DECLARED,
  CL_SHORT_SENT,
  GARBAGE_BYTES,
  HOSTILE_DEFAULTS,
  HOSTILE_ETAG,
  HOSTILE_HOST,
  HOSTILE_LAST_MODIFIED,
  HOSTILE_PATHS,
  LATIN1_TEXT,
  LOOPBACK_SECRET_MARKER,
  METADATA_URL,
  PDF_COMPRESSED_URLS,
  PDF_PLAIN_URLS,
  PDF_URLS,
  RESET_DECLARED,
  RESET_SENT,
  SJIS_TEXT,
  UTF16_TEXT,
  compressionBomb,
  encodeWindows1252,
  garbageBytes,
  hugeChunks,
  resolveHostileOptions,
  startTestWeb,
  type TestWeb,
} from '../../testweb/index.js';

let web: TestWeb;
before(async () => {
  web = await startTestWeb({ hosts: 1, seed: 1, hostile: true });
});
after(async () => {
  await web.close();
});

// ---------------------------------------------------------------- bounded clients

interface RawResult {
  data: Buffer;
  /** The server closed the connection (end or close) before our limits hit. */
  closed: boolean;
  timedOut: boolean;
  overflow: boolean;
  error?: string;
  /** ms from connect to the first byte of the response. */
  firstByteMs: number;
}

/** One request over a raw socket; collects bytes until the server closes, `timeoutMs` or `maxBytes`. */
function rawGet(path: string, opts: { host?: string; headers?: Record<string, string>; method?: string; timeoutMs?: number; maxBytes?: number } = {}): Promise<RawResult> {
  const { host = HOSTILE_HOST, headers = {}, method = 'GET', timeoutMs = 3000, maxBytes = 4 << 20 } = opts;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let firstByteMs = -1;
    const t0 = Date.now();
    const socket = connect({ host: '127.0.0.1', port: web.port });
    const done = (r: Omit<RawResult, 'data' | 'firstByteMs'>) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ data: Buffer.concat(chunks), firstByteMs, ...r });
    };
    const timer = setTimeout(() => done({ closed: false, timedOut: true, overflow: false }), timeoutMs);
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.on('connect', () => socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: hostile-test\r\nConnection: close\r\n${extra}\r\n`));
    socket.on('data', (c: Buffer) => {
      if (firstByteMs < 0) firstByteMs = Date.now() - t0;
      chunks.push(c);
      size += c.length;
      if (size > maxBytes) done({ closed: false, timedOut: false, overflow: true });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => done({ closed: true, timedOut: false, overflow: false, error: err.code ?? err.message }));
    socket.on('end', () => done({ closed: true, timedOut: false, overflow: false }));
  });
}

interface Head {
  status: number;
  headers: Array<[string, string]>;
  /** Bytes of the status line and headers, including the blank line. */
  headBytes: number;
  body: Buffer;
}

function splitHead(data: Buffer): Head {
  const end = data.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no end of headers in ${JSON.stringify(data.subarray(0, 200).toString('latin1'))}`);
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  const headers = lines.slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()] as [string, string];
  });
  return { status, headers, headBytes: end + 4, body: data.subarray(end + 4) };
}

const header = (h: Head, name: string) => h.headers.find(([k]) => k === name)?.[1];

interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** node:http GET (no decompression), bounded; rejects on a client-side error or the time limit. */
function httpGet(path: string, opts: { host?: string; headers?: Record<string, string>; method?: string; timeoutMs?: number; maxBytes?: number } = {}): Promise<HttpResult> {
  const { host = HOSTILE_HOST, headers = {}, method = 'GET', timeoutMs = 3000, maxBytes = 4 << 20 } = opts;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: web.port, path, method, agent: false, headers: { host, 'user-agent': 'hostile-test', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (size > maxBytes) req.destroy(new Error('too many bytes'));
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    const timer = setTimeout(() => req.destroy(new Error('timeout')), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

/** Inflates at most `limit` output bytes of a compressed body; returns them (and stops). */
function inflatePrefix(body: Buffer, z: Gunzip | BrotliDecompress, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      z.destroy();
      resolve(Buffer.concat(out).subarray(0, limit));
    };
    z.on('data', (c: Buffer) => {
      out.push(c);
      size += c.length;
      if (size >= limit) finish();
    });
    z.on('end', finish);
    z.on('error', (err) => {
      if (!settled) reject(err);
    });
    // Feed in small pieces so the decompressor can stop early.
    for (let i = 0; i < body.length && !settled; i += 16 * 1024) z.write(body.subarray(i, i + 16 * 1024));
    if (!settled) z.end();
  });
}

const isAllZero = (b: Buffer) => b.every((x) => x === 0);

// ---------------------------------------------------------------- tests

test('off by default; enabled: resolve rules, defaults, option checks', async () => {
  const plain = await startTestWeb({ hosts: 1, seed: 1 });
  try {
    assert.equal(plain.hostile, null);
    assert.ok(!plain.resolveRules.some((r) => r.includes('hostile')));
    const r = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port: plain.port, path: '/', headers: { host: HOSTILE_HOST } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    assert.equal(r, 421);
  } finally {
    await plain.close();
  }
  assert.deepEqual(web.resolveRules.slice(2), [`*.hostile.test=127.0.0.1:${web.port}`, `hostile.test=127.0.0.1:${web.port}`]);
  assert.deepEqual(web.hostile?.options, HOSTILE_DEFAULTS);
  assert.deepEqual(HOSTILE_DEFAULTS, { flakyFailures: 2, dripIntervalMs: 500, endlessIntervalMs: 10, endlessChunkBytes: 8192, hugeBytes: 20971520, bombBytes: 1073741824, chainLength: 50 });
  assert.deepEqual(resolveHostileOptions({ chainLength: 5 })?.chainLength, 5);
  assert.equal(resolveHostileOptions(false), null);
  assert.throws(() => resolveHostileOptions({ hugeBytes: 100 }), /hugeBytes must be an integer >= 4096/);
  assert.throws(() => resolveHostileOptions({ dripIntervalMs: 0.5 }), /dripIntervalMs/);
});

test('the index links every hostile path once; robots.txt allows all; paths are distinct and described', async () => {
  const paths = HOSTILE_PATHS.map((p) => p.path);
  assert.equal(new Set(paths).size, paths.length);
  assert.equal(paths.length, 21);
  for (const p of HOSTILE_PATHS) {
    assert.ok(p.description.length > 10 && p.expect.length > 10 && p.outcomes.length > 0, p.path);
  }
  const index = await httpGet('/');
  assert.equal(index.status, 200);
  const hrefs = [...index.body.toString().matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(hrefs, paths);
  const robots = await httpGet('/robots.txt');
  assert.equal(robots.status, 200);
  assert.equal(robots.body.toString(), 'User-agent: *\nAllow: /\n');
  assert.equal((await httpGet('/no-such-path')).status, 404);
  assert.equal((await httpGet('/', { method: 'POST' })).status, 405);
});

test('/endless keeps sending until the client leaves; the log records the close', async () => {
  web.clearLog();
  const r = await rawGet('/endless', { timeoutMs: 250, maxBytes: 64 << 20 });
  assert.ok(r.timedOut && !r.closed, 'still streaming when we hung up');
  const h = splitHead(r.data);
  assert.equal(h.status, 200);
  assert.equal(header(h, 'transfer-encoding'), 'chunked');
  assert.equal(header(h, 'content-length'), undefined);
  assert.ok(h.body.length > 50_000, `only ${h.body.length} bytes in 250 ms`);
  // The server notices the client left: the response closes and is logged.
  for (let i = 0; i < 50 && !web.requestLog().some((e) => e.path === '/endless'); i++) await new Promise((res) => setTimeout(res, 20));
  const rec = web.requestLog().find((e) => e.path === '/endless');
  assert.ok(rec, 'logged once the socket closed');
  assert.equal(rec.status, 200);
  assert.ok(rec.end - rec.start >= 200);
});

test('/drip sends headers at once, then one byte every 500 ms', async () => {
  const r = await rawGet('/drip', { timeoutMs: 1300 });
  assert.ok(r.timedOut);
  const h = splitHead(r.data);
  assert.equal(h.status, 200);
  assert.ok(r.firstByteMs < 400, `headers after ${r.firstByteMs} ms`);
  // chunked framing around each byte: count the payload bytes.
  const payload = h.body.toString('latin1').split('\r\n').filter((_, i) => i % 2 === 1).join('');
  assert.ok(payload.length >= 2 && payload.length <= 4, `drip sent ${payload.length} bytes in 1.3 s`);
  assert.equal(payload, '<!DOCTYPE html>'.slice(0, payload.length));
});

test('/gzip-bomb and /br-bomb: small bodies, content-encoding, inflating to zeros (1 GiB)', async () => {
  const gz = await httpGet('/gzip-bomb', { timeoutMs: 15_000, maxBytes: 2 << 20 });
  assert.equal(gz.status, 200);
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(Number(gz.headers['content-length']), gz.body.length);
  assert.ok(gz.body.length < 1_100_000, `gzip bomb is ${gz.body.length} bytes`);
  // The gzip trailer's ISIZE: inflated size mod 2^32.
  assert.equal(gz.body.readUInt32LE(gz.body.length - 4), HOSTILE_DEFAULTS.bombBytes % 2 ** 32);
  const gzHead = await inflatePrefix(gz.body, createGunzip(), 4 << 20);
  assert.equal(gzHead.length, 4 << 20);
  assert.ok(isAllZero(gzHead));

  const br = await httpGet('/br-bomb', { timeoutMs: 15_000, maxBytes: 2 << 20 });
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-encoding'], 'br');
  assert.ok(br.body.length < 4096, `brotli bomb is ${br.body.length} bytes`);
  const brHead = await inflatePrefix(br.body, createBrotliDecompress(), 4 << 20);
  assert.equal(brHead.length, 4 << 20);
  assert.ok(isAllZero(brHead));
  // Cached: made once per process (it takes seconds), so the second request is answered from the cache.
  assert.equal(compressionBomb('br', HOSTILE_DEFAULTS.bombBytes), compressionBomb('br', HOSTILE_DEFAULTS.bombBytes), 'one bomb per size, kept');
  assert.deepEqual((await httpGet('/br-bomb')).body, br.body);
  // The generator's exact size, on a small one inflated fully.
  const small = await compressionBomb('br', 3 * 2 ** 20 + 5);
  const all = await inflatePrefix(small, createBrotliDecompress(), 8 << 20);
  assert.equal(all.length, 3 * 2 ** 20 + 5);
  assert.ok(isAllZero(all));
});

test('/redirect-loop and its partner redirect to each other; /chain/N to N+1 up to a page at 50', async () => {
  const a = await httpGet('/redirect-loop');
  const b = await httpGet('/redirect-loop-b');
  assert.deepEqual([a.status, a.headers.location, b.status, b.headers.location], [302, '/redirect-loop-b', 302, '/redirect-loop']);
  let path = '/chain/0';
  let hops = 0;
  for (;;) {
    const r = await httpGet(path);
    if (r.status !== 302) {
      assert.equal(r.status, 200);
      break;
    }
    assert.equal(r.headers.location, `/chain/${hops + 1}`);
    path = String(r.headers.location);
    hops++;
    assert.ok(hops <= 50);
  }
  assert.equal(hops, 50);
  assert.equal(path, '/chain/50');
  assert.equal((await httpGet('/chain/51')).status, 404);
  assert.equal((await httpGet('/chain/007')).status, 404);
});

test('/cl-short declares more than it sends and closes; /cl-long sends more than it declares', async () => {
  const short = await rawGet('/cl-short');
  assert.ok(short.closed && !short.timedOut);
  const s = splitHead(short.data);
  assert.equal(s.status, 200);
  assert.equal(Number(header(s, 'content-length')), CL_SHORT_DECLARED);
  assert.equal(s.body.length, CL_SHORT_SENT);
  await assert.rejects(httpGet('/cl-short'), /aborted|ECONNRESET|socket hang up/);

  const long = await rawGet('/cl-long');
  assert.ok(long.closed && !long.timedOut);
  const l = splitHead(long.data);
  assert.equal(l.status, 200);
  assert.equal(Number(header(l, 'content-length')), CL_LONG_DECLARED);
  assert.equal(l.body.length, CL_LONG_SENT);
  assert.ok(l.body.toString().startsWith('<!DOCTYPE html>'));
});

test('/bad-chunked has a non-hex chunk size; node:http refuses it', async () => {
  const r = await rawGet('/bad-chunked');
  assert.ok(r.closed);
  const h = splitHead(r.data);
  assert.equal(header(h, 'transfer-encoding'), 'chunked');
  assert.ok(h.body.toString().includes(`\r\n${BAD_CHUNK_SIZE_LINE}\r\n`));
  await assert.rejects(httpGet('/bad-chunked'), (err: NodeJS.ErrnoException) => /HPE_INVALID_CHUNK_SIZE|Parse Error/.test(`${err.code} ${err.message}`));
});

test('/big-headers sends more than 64 KiB of headers; node:http (16 KiB limit) refuses it', async () => {
  const r = await rawGet('/big-headers');
  const h = splitHead(r.data);
  assert.equal(h.status, 200);
  assert.ok(h.headBytes >= BIG_HEADERS_MIN_BYTES, `header block is ${h.headBytes} bytes`);
  assert.equal(h.headers.filter(([k]) => k.startsWith('x-filler-')).length, BIG_HEADERS_COUNT);
  assert.ok(header(h, 'x-filler-1000'));
  await assert.rejects(httpGet('/big-headers'), (err: NodeJS.ErrnoException) => err.code === 'HPE_HEADER_OVERFLOW');
});

test('/reset sends part of the body, then resets the connection', async () => {
  const r = await rawGet('/reset');
  assert.ok(r.closed && !r.timedOut);
  assert.equal(r.error, 'ECONNRESET');
  const h = splitHead(r.data);
  assert.equal(h.status, 200);
  assert.equal(Number(header(h, 'content-length')), RESET_DECLARED);
  assert.ok(h.body.length > 0 && h.body.length <= RESET_SENT);
  await assert.rejects(httpGet('/reset'), /ECONNRESET|aborted/);
});

test('/to-loopback and /to-metadata redirect to internal addresses; 127.0.0.1 serves /secret', async () => {
  const loop = await httpGet('/to-loopback');
  assert.equal(loop.status, 302);
  assert.equal(loop.headers.location, `http://127.0.0.1:${web.port}/secret`);
  const meta = await httpGet('/to-metadata');
  assert.equal(meta.status, 302);
  assert.equal(meta.headers.location, METADATA_URL);
  assert.equal(METADATA_URL, 'http://169.254.169.254/latest/meta-data/');
  // What a crawler without an SSRF guard would get (the request goes to this server).
  web.clearLog();
  const secret = await httpGet('/secret', { host: `127.0.0.1:${web.port}` });
  assert.equal(secret.status, 200);
  assert.ok(secret.body.toString().includes(LOOPBACK_SECRET_MARKER));
  assert.deepEqual(web.requestLog().map((e) => `${e.host} ${e.path} ${e.status}`), ['127.0.0.1 /secret 200']);
  assert.equal((await httpGet('/', { host: '127.0.0.1' })).status, 404);
});

test('/garbage is 64 KiB of seeded random bytes as text/html', async () => {
  const r = await httpGet('/garbage');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/html');
  assert.equal(r.body.length, GARBAGE_BYTES);
  assert.deepEqual(r.body, garbageBytes());
  assert.equal(new Set(r.body).size, 256);
});

test('/huge is a 20 MiB valid page, streamed with an exact Content-Length', async () => {
  const r = await httpGet('/huge', { timeoutMs: 15_000, maxBytes: 21 << 20 });
  assert.equal(r.status, 200);
  assert.equal(Number(r.headers['content-length']), 20 * 1024 * 1024);
  assert.equal(r.body.length, 20 * 1024 * 1024);
  const text = r.body.toString('utf8', 0, 200);
  assert.ok(text.startsWith('<!DOCTYPE html>\n<html lang="en">'));
  assert.ok(r.body.subarray(-30).toString().endsWith('</body>\n</html>\n'));
  const expected = createHash('sha256');
  for (const c of hugeChunks()) expected.update(c);
  assert.equal(createHash('sha256').update(r.body).digest('hex'), expected.digest('hex'));
});

test('charset pages: windows-1252 in meta, Shift_JIS in the header, UTF-16LE with a BOM', async () => {
  const [latin1, sjis, utf16] = CHARSET_PAGES;
  const l = await httpGet('/latin1');
  assert.equal(l.headers['content-type'], 'text/html');
  assert.equal(latin1!.contentType, 'text/html');
  assert.ok(l.body.includes('<meta charset="windows-1252">'));
  // é ï – “ ” as single windows-1252 bytes (spelled out here: Node 20's TextDecoder decodes
  // windows-1252 as ISO-8859-1, so 0x80-0x9F can't be checked with it), and so not UTF-8.
  const ascii = (t: string) => [...Buffer.from(t, 'ascii')];
  const expected = Buffer.from([...ascii('caf'), 0xe9, ...ascii(' na'), 0xef, ...ascii('ve '), 0x96, 0x20, 0x93, ...ascii('quotes'), 0x94]);
  assert.ok(l.body.includes(Buffer.concat([Buffer.from('<title>'), expected, Buffer.from('</title>')])));
  assert.ok(l.body.includes(Buffer.concat([Buffer.from('<p>'), expected, Buffer.from('</p>')])));
  assert.deepEqual(encodeWindows1252(LATIN1_TEXT), expected);
  assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(l.body));
  assert.equal(latin1!.declaredIn, 'meta');

  const s = await httpGet('/sjis');
  assert.equal(s.headers['content-type'], 'text/html; charset=Shift_JIS');
  assert.equal(sjis!.contentType, s.headers['content-type']);
  assert.ok(!s.body.toString('latin1').includes('charset'), 'declared only in the header');
  const sText = new TextDecoder('shift_jis', { fatal: true }).decode(s.body);
  assert.ok(sText.includes(`<title>${SJIS_TEXT}</title>`) && sText.includes(`<p>${SJIS_TEXT}</p>`));
  assert.ok(s.body.includes(Buffer.from([0x82, 0xb1, 0x82, 0xf1])), 'こん in Shift_JIS');

  const u = await httpGet('/bom-utf16');
  assert.equal(u.headers['content-type'], 'text/html');
  assert.equal(utf16!.declaredIn, 'bom');
  assert.deepEqual([...u.body.subarray(0, 2)], [0xff, 0xfe]);
  const uText = new TextDecoder('utf-16le', { fatal: true }).decode(u.body); // drops the BOM
  assert.ok(uText.startsWith('<!DOCTYPE html>'));
  assert.ok(uText.includes(`<p>${UTF16_TEXT}</p>`) && !uText.includes('charset'));
});

test('/doc.pdf: a well-formed PDF with two plain URLs and one inside a FlateDecode stream', async () => {
  const r = await httpGet('/doc.pdf');
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/pdf');
  const pdf = r.body;
  const latin = pdf.toString('latin1');
  assert.ok(latin.startsWith('%PDF-1.4\n') && latin.endsWith('%%EOF\n'));
  for (const u of PDF_PLAIN_URLS) assert.ok(latin.includes(u), u);
  for (const u of PDF_COMPRESSED_URLS) assert.ok(!latin.includes(u), 'the compressed URL is not visible raw');
  // xref: startxref points at "xref", and every entry at its "N 0 obj".
  const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(latin)![1]);
  assert.equal(latin.slice(startxref, startxref + 4), 'xref');
  const entries = [...latin.slice(startxref).matchAll(/^(\d{10}) 00000 n $/gm)].map((m) => Number(m[1]));
  assert.equal(entries.length, 6);
  entries.forEach((off, i) => assert.equal(latin.slice(off, off + `${i + 1} 0 obj`.length), `${i + 1} 0 obj`));
  // Inflate the FlateDecode stream by its /Length.
  const m = /<< \/Length (\d+) \/Filter \/FlateDecode >>\nstream\n/.exec(latin)!;
  const start = m.index + m[0].length;
  const inflated = inflateSync(pdf.subarray(start, start + Number(m[1]))).toString('latin1');
  for (const u of PDF_COMPRESSED_URLS) assert.ok(inflated.includes(u));
  assert.equal(PDF_URLS.length, 3);
  for (const u of PDF_URLS) assert.equal((await httpGet(new URL(u).pathname)).status, 200, u);
});

test('/etag: 200 with validators; 304 (no body) on a matching If-None-Match or a recent If-Modified-Since', async () => {
  const first = await httpGet('/etag');
  assert.equal(first.status, 200);
  assert.equal(first.headers.etag, HOSTILE_ETAG);
  assert.equal(first.headers['last-modified'], HOSTILE_LAST_MODIFIED);
  const cases: Array<[Record<string, string>, number]> = [
    [{ 'if-none-match': HOSTILE_ETAG }, 304],
    [{ 'if-none-match': `"other", W/${HOSTILE_ETAG}` }, 304],
    [{ 'if-none-match': '*' }, 304],
    [{ 'if-none-match': '"other"' }, 200],
    // If-None-Match present: If-Modified-Since is ignored (RFC 9110).
    [{ 'if-none-match': '"other"', 'if-modified-since': 'Tue, 02 Jan 2024 00:00:00 GMT' }, 200],
    [{ 'if-modified-since': HOSTILE_LAST_MODIFIED }, 304],
    [{ 'if-modified-since': 'Tue, 02 Jan 2024 00:00:00 GMT' }, 304],
    [{ 'if-modified-since': 'Sun, 31 Dec 2023 23:59:59 GMT' }, 200],
    [{ 'if-modified-since': 'not a date' }, 200],
  ];
  for (const [headers, status] of cases) {
    const r = await httpGet('/etag', { headers });
    assert.equal(r.status, status, JSON.stringify(headers));
    if (status === 304) {
      assert.equal(r.body.length, 0);
      assert.equal(r.headers.etag, HOSTILE_ETAG);
    } else assert.deepEqual(r.body, first.body);
  }
});

test('/flaky-500 answers 500 to its first two GETs, then 200', async () => {
  assert.equal(web.hostile?.flakyRequests(), 0);
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await httpGet('/flaky-500')).status);
  assert.deepEqual(statuses, [500, 500, 200, 200]);
});

test('the request log records hostile responses, raw-socket ones with their status, with end after start', async () => {
  web.clearLog();
  await rawGet('/cl-long');
  await rawGet('/bad-chunked');
  await rawGet('/reset');
  await rawGet('/cl-short');
  await httpGet('/redirect-loop');
  for (let i = 0; i < 50 && web.requestLog().length < 5; i++) await new Promise((res) => setTimeout(res, 20));
  const log = web.requestLog();
  assert.deepEqual(
    log.map((e) => `${e.host} ${e.path} ${e.status}`),
    ['hostile.test /cl-long 200', 'hostile.test /bad-chunked 200', 'hostile.test /reset 200', 'hostile.test /cl-short 200', 'hostile.test /redirect-loop 302'],
  );
  assert.ok(log.every((e) => e.end >= e.start && e.userAgent === 'hostile-test' && e.localAddress === '127.0.0.1'));
  const reset = log.find((e) => e.path === '/reset')!;
  assert.ok(reset.end - reset.start >= 40, 'the reset record ends when the socket closed');
});
