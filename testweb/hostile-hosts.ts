// A host that attacks the crawler, opt-in through startTestWeb({ hostile }). hostile.test
// (on the main 127.0.0.1 listener) serves one misbehaviour per path, each linked from "/", so
// a crawl seeded at http://hostile.test/ meets them all at depth 1:
//
//   slow / endless    /endless (never-ending body), /drip (one byte every 500 ms)
//   size              /gzip-bomb, /br-bomb (a ~1 MB / ~2 KB body that inflates to 1 GiB),
//                     /huge (a valid 20 MiB page), /big-headers (~70 KB of response headers)
//   redirects         /redirect-loop <-> /redirect-loop-b, /chain/0 -> ... -> /chain/50
//   framing           /cl-short, /cl-long (lying Content-Length), /bad-chunked, /reset
//   SSRF              /to-loopback (302 to http://127.0.0.1:<port>/secret),
//                     /to-metadata (302 to http://169.254.169.254/..., data only)
//   content           /garbage (random bytes as text/html), /latin1, /sjis, /bom-utf16
//                     (charsets declared in meta, header, BOM), /doc.pdf (URLs in a PDF)
//   HTTP semantics    /etag (304 on a matching validator), /flaky-500 (500 twice, then 200)
//
// HOSTILE_PATHS lists them with what a well-behaved crawler records for each. With hostile on,
// the IP-literal host 127.0.0.1 serves /secret too, so a crawler that follows /to-loopback
// leaves an unmistakable record in the request log (host "127.0.0.1", path "/secret").
// HEAD is answered like GET (Node drops the body of the res-based responses; the raw-socket
// ones send theirs anyway).
//
// Everything is deterministic; the bombs and the big bodies are generated once per process
// (lazily) and streamed with backpressure, so the server's memory stays small.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { constants as zlibConstants, createBrotliCompress, createGzip, deflateSync, type BrotliCompress, type Gzip } from 'node:zlib';
import { deriveSeed, mulberry32, pick } from './prng.js';
import { WORDS } from './words.js';

export interface HostileHostsOptions {
  /** /flaky-500: how many GETs answer 500 before it answers 200. Default 2. */
  flakyFailures?: number;
  /** /drip: ms between bytes. Default 500. */
  dripIntervalMs?: number;
  /** /endless: ms between chunks. Default 10. */
  endlessIntervalMs?: number;
  /** /endless: bytes per chunk. Default 8192. */
  endlessChunkBytes?: number;
  /** /huge: exact body size in bytes (>= 4096). Default 20 MiB (20971520). */
  hugeBytes?: number;
  /** /gzip-bomb and /br-bomb: inflated size in bytes (>= 1). Default 1 GiB (1073741824). */
  bombBytes?: number;
  /** /chain/N: the last N (a normal page); /chain/0 .. /chain/N-1 redirect to the next. Default 50. */
  chainLength?: number;
}

export type ResolvedHostileOptions = Readonly<Required<HostileHostsOptions>>;

export const HOSTILE_DEFAULTS: ResolvedHostileOptions = Object.freeze({
  flakyFailures: 2,
  dripIntervalMs: 500,
  endlessIntervalMs: 10,
  endlessChunkBytes: 8192,
  hugeBytes: 20 * 1024 * 1024,
  bombBytes: 1024 * 1024 * 1024,
  chainLength: 50,
});

export const HOSTILE_DOMAIN = 'hostile.test';
export const HOSTILE_HOST = 'hostile.test';
export const HOSTILE_SEED_URL = `http://${HOSTILE_HOST}/`;
/** The IP-literal host /to-loopback redirects to (served only when hostile is on). */
export const LOOPBACK_HOST = '127.0.0.1';
export const LOOPBACK_SECRET_PATH = '/secret';
/** In the body of http://127.0.0.1:<port>/secret: a crawl that stores it followed /to-loopback. */
export const LOOPBACK_SECRET_MARKER = 'testweb-loopback-secret-7f3a';
/** Where /to-metadata redirects: the cloud metadata endpoint. Data only, never contacted. */
export const METADATA_URL = 'http://169.254.169.254/latest/meta-data/';

/** /cl-short: declared Content-Length and bytes actually sent before the connection closes. */
export const CL_SHORT_DECLARED = 100_000;
export const CL_SHORT_SENT = 1000;
/** /cl-long: declared Content-Length and bytes actually sent (raw, then the connection closes). */
export const CL_LONG_DECLARED = 100;
export const CL_LONG_SENT = 1000;
/** /reset: declared Content-Length, bytes sent, and ms before the RST. */
export const RESET_DECLARED = 100_000;
export const RESET_SENT = 2000;
export const RESET_AFTER_MS = 50;
/** /big-headers: X-Filler-1 .. X-Filler-<count>, at least this many bytes of header block. */
export const BIG_HEADERS_COUNT = 1000;
export const BIG_HEADERS_MIN_BYTES = 64 * 1024;
/** /garbage: bytes of seeded random data. */
export const GARBAGE_BYTES = 64 * 1024;
/** /bad-chunked: the malformed chunk-size line (not hex) that follows one valid chunk. */
export const BAD_CHUNK_SIZE_LINE = 'zz-not-hex';
/** /etag validators. */
export const HOSTILE_ETAG = '"hostile-etag-v1"';
export const HOSTILE_LAST_MODIFIED = 'Mon, 01 Jan 2024 00:00:00 GMT';
/** /br-bomb's brotli quality: ~1.6 KB for 1 GiB in ~2 s (11 would take minutes). */
export const BROTLI_BOMB_QUALITY = 4;

/** The text of each charset page (in its <title> and its <p>), as a correct decoder yields it. */
export const LATIN1_TEXT = 'café naïve – “quotes”';
export const SJIS_TEXT = 'こんにちは、世界。日本語のページです。';
export const UTF16_TEXT = 'UTF-16 page: Ελληνικά, русский, 中文, emoji 😀';
/** SJIS_TEXT in Shift_JIS (hand-encoded: Node has no Shift_JIS encoder, only a decoder). */
const SJIS_TEXT_HEX = '82b182f182c982bf82cd814190a28a45814293fa967b8cea82cc8379815b835782c582b78142';

export interface CharsetPage {
  path: string;
  /** The encoding of the bytes (a WHATWG encoding label TextDecoder accepts). */
  charset: 'windows-1252' | 'shift_jis' | 'utf-16le';
  /** Where the page declares it. */
  declaredIn: 'meta' | 'header' | 'bom';
  contentType: string;
  /** Decoded text of its <title> and of its only <p>. */
  text: string;
}

export const CHARSET_PAGES: readonly CharsetPage[] = Object.freeze([
  { path: '/latin1', charset: 'windows-1252', declaredIn: 'meta', contentType: 'text/html', text: LATIN1_TEXT },
  { path: '/sjis', charset: 'shift_jis', declaredIn: 'header', contentType: 'text/html; charset=Shift_JIS', text: SJIS_TEXT },
  { path: '/bom-utf16', charset: 'utf-16le', declaredIn: 'bom', contentType: 'text/html', text: UTF16_TEXT },
] as const);

/** URLs in /doc.pdf: two in an uncompressed content stream, one in a FlateDecode one. Each is a small page. */
export const PDF_PLAIN_URLS: readonly string[] = Object.freeze([`http://${HOSTILE_HOST}/from-pdf/plain-1`, `http://${HOSTILE_HOST}/from-pdf/plain-2`]);
export const PDF_COMPRESSED_URLS: readonly string[] = Object.freeze([`http://${HOSTILE_HOST}/from-pdf/deflated`]);
export const PDF_URLS: readonly string[] = Object.freeze([...PDF_PLAIN_URLS, ...PDF_COMPRESSED_URLS]);

/** The fetch_log outcomes of the crawler (schemas/outcome-messages.ts), restated to keep testweb standalone. */
export type HostileOutcome = 'fetched' | 'redirect' | 'http_error' | 'network_error' | 'filtered' | 'unsupported_content' | 'retry';

export interface HostilePath {
  /** Linked from "/" (so at depth 1 from HOSTILE_SEED_URL). */
  path: string;
  category: 'slow' | 'size' | 'redirect' | 'framing' | 'ssrf' | 'content' | 'http';
  /** What the server does. */
  description: string;
  /** What a well-behaved crawler records for this URL (and what it must not do). */
  expect: string;
  /** fetch_log outcomes acceptable for this URL (the first is the usual one). */
  outcomes: readonly HostileOutcome[];
}

export const HOSTILE_PATHS: readonly HostilePath[] = Object.freeze([
  {
    path: '/endless',
    category: 'slow',
    description: '200 text/html, chunked body that never ends (~8 KB every 10 ms until the client goes away)',
    expect: 'network_error body too large (or total timeout); connection closed, nothing of unbounded size stored',
    outcomes: ['network_error'],
  },
  {
    path: '/drip',
    category: 'slow',
    description: '200 text/html, one byte every 500 ms forever',
    expect: 'network_error timeout (minimum transfer rate or total time)',
    outcomes: ['network_error'],
  },
  {
    path: '/gzip-bomb',
    category: 'size',
    description: 'Content-Encoding: gzip, ~1 MB that inflates to 1 GiB of zeros',
    expect: 'network_error decompressed body too large; never inflates past the cap',
    outcomes: ['network_error'],
  },
  {
    path: '/br-bomb',
    category: 'size',
    description: 'Content-Encoding: br, ~2 KB that inflates to 1 GiB of zeros',
    expect: 'network_error decompressed body too large; never inflates past the cap',
    outcomes: ['network_error'],
  },
  {
    path: '/huge',
    category: 'size',
    description: 'a valid 20 MiB HTML page with an exact Content-Length, streamed',
    expect: 'stored cut at the body cap and marked truncated, without reading the rest (a valid page, only too big)',
    outcomes: ['fetched'],
  },
  {
    path: '/big-headers',
    category: 'size',
    description: `200 with ${BIG_HEADERS_COUNT} X-Filler-N headers (> 64 KiB of header block)`,
    expect: 'network_error headers too large (header size cap); no page stored',
    outcomes: ['network_error'],
  },
  {
    path: '/redirect-loop',
    category: 'redirect',
    description: '302 to /redirect-loop-b, which 302s back to /redirect-loop',
    expect: 'redirect loop: each of the two URLs fetched at most once, recorded as redirect (or http_error "redirect loop"); no endless cycle',
    outcomes: ['redirect', 'http_error'],
  },
  {
    path: '/chain/0',
    category: 'redirect',
    description: '/chain/N 302s to /chain/N+1; /chain/50 is a normal page (51 hops)',
    expect: 'too many redirects: the chain is cut at the hop limit (recorded as redirect / http_error); /chain/50 only reached if the limit allows 50 hops',
    outcomes: ['redirect', 'http_error'],
  },
  {
    path: '/cl-short',
    category: 'framing',
    description: `Content-Length ${CL_SHORT_DECLARED}, ${CL_SHORT_SENT} bytes sent, then the connection closes`,
    expect: 'network_error truncated body (premature close); a truncated page is never stored as complete',
    outcomes: ['network_error'],
  },
  {
    path: '/cl-long',
    category: 'framing',
    description: `Content-Length ${CL_LONG_DECLARED} but ${CL_LONG_SENT} bytes sent (raw), then the connection closes`,
    expect: `the page is the first ${CL_LONG_DECLARED} bytes (the excess dies with the connection, never parsed as another response), or network_error`,
    outcomes: ['fetched', 'network_error'],
  },
  {
    path: '/bad-chunked',
    category: 'framing',
    description: `Transfer-Encoding: chunked with one valid chunk, then a chunk-size line "${BAD_CHUNK_SIZE_LINE}"`,
    expect: 'network_error HTTP parse error (invalid chunk size)',
    outcomes: ['network_error'],
  },
  {
    path: '/reset',
    category: 'framing',
    description: `headers and ${RESET_SENT} of ${RESET_DECLARED} declared bytes, then a TCP RST`,
    expect: 'network_error ECONNRESET',
    outcomes: ['network_error', 'retry'],
  },
  {
    path: '/to-loopback',
    category: 'ssrf',
    description: '302 to http://127.0.0.1:<the server port>/secret (an IP literal)',
    expect: 'redirect recorded; its target refused by the SSRF guard (filtered); no request for /secret ever arrives',
    outcomes: ['redirect', 'filtered'],
  },
  {
    path: '/to-metadata',
    category: 'ssrf',
    description: `302 to ${METADATA_URL}`,
    expect: 'redirect recorded; its target refused by the SSRF guard (filtered); nothing connects to 169.254.169.254',
    outcomes: ['redirect', 'filtered'],
  },
  {
    path: '/garbage',
    category: 'content',
    description: `200 text/html, ${GARBAGE_BYTES} bytes of seeded random binary`,
    expect: 'fetched (or unsupported_content when sniffed as binary); extraction survives, no links',
    outcomes: ['fetched', 'unsupported_content'],
  },
  {
    path: '/latin1',
    category: 'content',
    description: 'windows-1252 bytes, charset only in <meta charset>',
    expect: `fetched; text decoded as "${LATIN1_TEXT}"`,
    outcomes: ['fetched'],
  },
  {
    path: '/sjis',
    category: 'content',
    description: 'Shift_JIS bytes, charset only in the Content-Type header',
    expect: `fetched; text decoded as "${SJIS_TEXT}"`,
    outcomes: ['fetched'],
  },
  {
    path: '/bom-utf16',
    category: 'content',
    description: 'UTF-16LE with a BOM, no declared charset',
    expect: `fetched; text decoded as "${UTF16_TEXT}"`,
    outcomes: ['fetched'],
  },
  {
    path: '/doc.pdf',
    category: 'content',
    description: 'application/pdf with two URLs in a plain stream and one in a FlateDecode stream',
    expect: 'unsupported_content (not HTML), or, for a crawler that reads PDFs, fetched with the three PDF_URLS as links',
    outcomes: ['unsupported_content', 'fetched'],
  },
  {
    path: '/etag',
    category: 'http',
    description: `page with ETag ${HOSTILE_ETAG} and Last-Modified; 304 on a matching If-None-Match / If-Modified-Since`,
    expect: 'fetched; a recrawl with validators gets 304 and keeps the stored page',
    outcomes: ['fetched'],
  },
  {
    path: '/flaky-500',
    category: 'http',
    description: '500 for its first 2 GETs, then 200 with a page',
    expect: 'retry (5xx is retryable) until it answers 200, then fetched',
    outcomes: ['retry', 'fetched'],
  },
] satisfies HostilePath[]);

/** undefined/false -> null (not enabled); true -> defaults; an object -> defaults overridden. */
export function resolveHostileOptions(opts: HostileHostsOptions | boolean | undefined): ResolvedHostileOptions | null {
  if (opts === undefined || opts === false) return null;
  const o = opts === true ? {} : opts;
  const resolved = { ...HOSTILE_DEFAULTS };
  const min: Record<keyof HostileHostsOptions, number> = {
    flakyFailures: 0,
    dripIntervalMs: 1,
    endlessIntervalMs: 1,
    endlessChunkBytes: 1,
    hugeBytes: 4096,
    bombBytes: 1,
    chainLength: 1,
  };
  for (const key of Object.keys(resolved) as Array<keyof HostileHostsOptions>) {
    const v = o[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < min[key]) throw new Error(`testweb: hostile.${key} must be an integer >= ${min[key]}, got ${v}`);
    resolved[key] = v;
  }
  return Object.freeze(resolved);
}

// ---------------------------------------------------------------- static bodies

const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';

function simplePage(title: string, bodyHtml: string): string {
  return `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n</head>\n<body>\n<h1>${title}</h1>\n${bodyHtml}\n</body>\n</html>\n`;
}

function indexPage(): string {
  const items = HOSTILE_PATHS.map((p) => `<li><a href="${p.path}">${p.path}</a> ${p.description.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</li>`);
  return simplePage('Hostile web', `<p>Every link below misbehaves in its own way.</p>\n<ul>\n${items.join('\n')}\n</ul>`);
}

const WINDOWS_1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/** windows-1252 bytes of a string (throws on a character it cannot encode). */
export function encodeWindows1252(s: string): Buffer {
  const out: number[] = [];
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 0x80 || (c >= 0xa0 && c <= 0xff)) out.push(c);
    else {
      const i = WINDOWS_1252_HIGH.indexOf(ch);
      if (i < 0) throw new Error(`windows-1252 cannot encode U+${c.toString(16)}`);
      out.push(0x80 + i);
    }
  }
  return Buffer.from(out);
}

const charsetHtml = (lang: string, meta: string, text: string) =>
  `<!DOCTYPE html>\n<html lang="${lang}">\n<head>\n${meta}<title>${text}</title>\n</head>\n<body>\n<p>${text}</p>\n</body>\n</html>\n`;

function latin1Page(): Buffer {
  return encodeWindows1252(charsetHtml('fr', '<meta charset="windows-1252">\n', LATIN1_TEXT));
}

function sjisPage(): Buffer {
  // The page frame is ASCII; the text goes in as its Shift_JIS bytes (title and paragraph).
  const [before, between, after] = charsetHtml('ja', '', '\u0000').split('\u0000') as [string, string, string];
  const text = Buffer.from(SJIS_TEXT_HEX, 'hex');
  return Buffer.concat([Buffer.from(before, 'ascii'), text, Buffer.from(between, 'ascii'), text, Buffer.from(after, 'ascii')]);
}

function utf16Page(): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(charsetHtml('en', '', UTF16_TEXT), 'utf16le')]);
}

/** /garbage: deterministic random bytes. */
export function garbageBytes(length = GARBAGE_BYTES): Buffer {
  const rng = mulberry32(deriveSeed('hostile', 'garbage'));
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = Math.floor(rng() * 256);
  return out;
}

/** /doc.pdf: a small one-page PDF 1.4 with a correct xref table. */
export function buildPdf(): Buffer {
  const plain = `BT /F1 12 Tf 72 720 Td (See ${PDF_PLAIN_URLS[0]}) Tj 0 -20 Td (and ${PDF_PLAIN_URLS[1]}) Tj ET\n`;
  const deflated = deflateSync(Buffer.from(`BT /F1 12 Tf 72 660 Td (Also ${PDF_COMPRESSED_URLS[0]}) Tj ET\n`, 'latin1'));
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 6 0 R >> >> /Contents [4 0 R 5 0 R] >>'),
    Buffer.from(`<< /Length ${Buffer.byteLength(plain)} >>\nstream\n${plain}endstream`, 'latin1'),
    Buffer.concat([Buffer.from(`<< /Length ${deflated.length} /Filter /FlateDecode >>\nstream\n`), deflated, Buffer.from('\nendstream')]),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(offset);
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    parts.push(obj);
    offset += obj.length;
  });
  const xref = ['xref', `0 ${objects.length + 1}`, '0000000000 65535 f ', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `)].join('\n');
  parts.push(Buffer.from(`${xref}\ntrailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------- generated once, lazily

const bombs = new Map<string, Promise<Buffer>>();

/**
 * The compressed body of /gzip-bomb or /br-bomb: `bytes` zeros, compressed by streaming a
 * 1 MiB zero buffer through zlib (memory: the output plus one chunk). Cached per process.
 * gzip uses Z_RLE (the same ~1/1030 ratio as level 9, five times faster).
 */
export function compressionBomb(encoding: 'gzip' | 'br', bytes: number = HOSTILE_DEFAULTS.bombBytes): Promise<Buffer> {
  const key = `${encoding}:${bytes}`;
  let hit = bombs.get(key);
  if (!hit) {
    hit = generateBomb(encoding, bytes);
    bombs.set(key, hit);
    hit.catch(() => bombs.delete(key));
  }
  return hit;
}

async function generateBomb(encoding: 'gzip' | 'br', bytes: number): Promise<Buffer> {
  const z: Gzip | BrotliCompress =
    encoding === 'gzip'
      ? createGzip({ level: 9, strategy: zlibConstants.Z_RLE })
      : createBrotliCompress({
          params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_BOMB_QUALITY, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes },
        });
  const chunks: Buffer[] = [];
  z.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    z.once('end', resolve);
    z.once('error', reject);
  });
  const zero = Buffer.alloc(Math.min(bytes, 1 << 20));
  for (let left = bytes; left > 0; left -= zero.length) {
    if (!z.write(left >= zero.length ? zero : zero.subarray(0, left))) {
      await new Promise<void>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        z.once('error', onError);
        z.once('drain', () => {
          z.off('error', onError);
          resolve();
        });
      });
    }
  }
  z.end();
  await done;
  return Buffer.concat(chunks);
}

interface HugeParts {
  head: Buffer;
  block: Buffer;
  tail: Buffer;
}
let hugeParts: HugeParts | null = null;

/** /huge: a head, one ~64 KB block of paragraphs repeated, space padding, a tail. */
function huge(): HugeParts {
  if (hugeParts) return hugeParts;
  const rng = mulberry32(deriveSeed('hostile', 'huge'));
  const paragraphs: string[] = [];
  let size = 0;
  while (size < 64 * 1024) {
    const words: string[] = [];
    for (let k = 0; k < 60; k++) words.push(pick(rng, WORDS.en));
    const p = `<p>${words.join(' ')}.</p>\n`;
    paragraphs.push(p);
    size += Buffer.byteLength(p);
  }
  hugeParts = {
    head: Buffer.from('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>A huge page</title>\n</head>\n<body>\n<h1>A huge page</h1>\n'),
    block: Buffer.from(paragraphs.join('')),
    tail: Buffer.from('\n<p><a href="/">Back to the index</a></p>\n</body>\n</html>\n'),
  };
  return hugeParts;
}

/** The exact /huge body as a sequence of chunks (the test can compare a prefix or the size). */
export function* hugeChunks(total: number = HOSTILE_DEFAULTS.hugeBytes): Generator<Buffer> {
  const { head, block, tail } = huge();
  let middle = total - head.length - tail.length;
  if (middle < 0) throw new Error(`testweb: hugeBytes ${total} is smaller than the page frame`);
  yield head;
  for (; middle >= block.length; middle -= block.length) yield block;
  if (middle > 0) yield Buffer.alloc(middle, 0x20);
  yield tail;
}

// ---------------------------------------------------------------- serving

/** A response the server sends as is (through its usual send(), which logs it). */
export interface HostileSimpleResponse {
  status: number;
  type: string;
  body: string | Buffer;
  headers?: Record<string, string>;
}

/** What the server tells a hostile response about the request. */
export interface HostileContext {
  /** The server port the request arrived on (for /to-loopback). */
  port: number;
  /** For a raw-socket response (no res.writeHead): the status the request log records. */
  rawStatus(status: number): void;
}

const NOT_FOUND: HostileSimpleResponse = { status: 404, type: HTML, body: simplePage('Not found', '<p>Nothing here.</p>') };
const redirect = (location: string): HostileSimpleResponse => ({
  status: 302,
  type: HTML,
  body: simplePage('Moved', `<p><a href="${location}">Moved here</a></p>`),
  headers: { location },
});

/** Writes chunks with backpressure until next() returns null (then ends) or res is gone. */
function pump(res: ServerResponse, next: () => Buffer | null): void {
  const go = () => {
    while (!res.destroyed) {
      const chunk = next();
      if (chunk === null) {
        res.end();
        return;
      }
      if (!res.write(chunk)) {
        res.once('drain', go);
        return;
      }
    }
  };
  go();
}

/** Raw bytes on the socket, bypassing Node's framing, then the connection closes. */
function rawResponse(socket: Socket, ctx: HostileContext, status: number, bytes: Buffer): void {
  ctx.rawStatus(status);
  socket.write(bytes, () => socket.destroy());
}

/** One server's hostile host: options, per-server state (the flaky counter) and responses. */
export class HostileHosts {
  readonly options: ResolvedHostileOptions;
  readonly hostNames: readonly string[] = Object.freeze([HOSTILE_HOST]);
  private flakyGets = 0;
  private readonly statics = new Map<string, Buffer | string>();

  constructor(opts: HostileHostsOptions | boolean) {
    this.options = resolveHostileOptions(opts) ?? HOSTILE_DEFAULTS;
  }

  /** hostile.test, and the IP-literal host 127.0.0.1 (which serves only /secret). */
  has(host: string): boolean {
    return host === HOSTILE_HOST || host === LOOPBACK_HOST;
  }

  /** `--resolve` rules for hostile.test and its subdomains (subdomains are unknown hosts: 421). */
  resolveRules(port: number): string[] {
    return [`*.${HOSTILE_DOMAIN}=127.0.0.1:${port}`, `${HOSTILE_DOMAIN}=127.0.0.1:${port}`];
  }

  /** How many GETs /flaky-500 has had. */
  flakyRequests(): number {
    return this.flakyGets;
  }

  private cached(key: string, make: () => Buffer | string): Buffer | string {
    let v = this.statics.get(key);
    if (v === undefined) {
      v = make();
      this.statics.set(key, v);
    }
    return v;
  }

  /**
   * The response for a request to a host this object has (see has()). A simple response is
   * returned for the server to send; null means this method took the response over (streamed
   * it, wrote raw bytes, or will destroy the connection).
   */
  respond(req: IncomingMessage, res: ServerResponse, host: string, target: string, ctx: HostileContext): HostileSimpleResponse | null {
    const method = req.method ?? '';
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, type: TEXT, body: 'method not allowed\n', headers: { allow: 'GET, HEAD' } };
    const path = target.split('?')[0]!.split('#')[0]!;
    if (host === LOOPBACK_HOST) {
      if (path !== LOOPBACK_SECRET_PATH) return NOT_FOUND;
      return { status: 200, type: HTML, body: simplePage('Internal secret', `<p>${LOOPBACK_SECRET_MARKER}: a crawler followed a redirect to a loopback IP.</p>`) };
    }
    const o = this.options;
    const chain = /^\/chain\/(0|[1-9]\d*)$/.exec(path);
    if (chain) {
      const n = Number(chain[1]);
      if (n < o.chainLength) return redirect(`/chain/${n + 1}`);
      if (n === o.chainLength) return { status: 200, type: HTML, body: simplePage(`End of the chain (${n})`, '<p>You followed every hop.</p>') };
      return NOT_FOUND;
    }
    if (path.startsWith('/from-pdf/')) {
      if (!PDF_URLS.includes(`http://${HOSTILE_HOST}${path}`)) return NOT_FOUND;
      return { status: 200, type: HTML, body: simplePage(`Linked from a PDF: ${path.slice('/from-pdf/'.length)}`, '<p>Found through /doc.pdf.</p>') };
    }
    switch (path) {
      case '/':
        return { status: 200, type: HTML, body: this.cached('/', indexPage) };
      case '/robots.txt':
        return { status: 200, type: TEXT, body: 'User-agent: *\nAllow: /\n' };
      case '/endless':
        return this.endless(res);
      case '/drip':
        return this.drip(res);
      case '/gzip-bomb':
      case '/br-bomb':
        return this.bomb(res, path === '/gzip-bomb' ? 'gzip' : 'br');
      case '/huge': {
        res.writeHead(200, { 'content-type': HTML, 'content-length': String(o.hugeBytes) });
        const it = hugeChunks(o.hugeBytes);
        pump(res, () => {
          const r = it.next();
          return r.done ? null : r.value;
        });
        return null;
      }
      case '/redirect-loop':
        return redirect('/redirect-loop-b');
      case '/redirect-loop-b':
        return redirect('/redirect-loop');
      case '/cl-short':
        return this.clShort(res);
      case '/cl-long':
        return this.clLong(req, ctx);
      case '/bad-chunked':
        return this.badChunked(req, ctx);
      case '/big-headers': {
        const headers: Record<string, string> = {};
        for (let i = 1; i <= BIG_HEADERS_COUNT; i++) headers[`X-Filler-${i}`] = `${String(i).padStart(4, '0')}-${'f'.repeat(48)}`;
        return { status: 200, type: HTML, body: simplePage('Big headers', '<p>The headers of this page are larger than its body.</p>'), headers };
      }
      case '/reset':
        return this.reset(res);
      case '/to-loopback':
        return redirect(`http://${LOOPBACK_HOST}:${ctx.port}${LOOPBACK_SECRET_PATH}`);
      case '/to-metadata':
        return redirect(METADATA_URL);
      case '/garbage':
        return { status: 200, type: 'text/html', body: this.cached('/garbage', () => garbageBytes()) };
      case '/latin1':
        return { status: 200, type: 'text/html', body: this.cached(path, latin1Page) };
      case '/sjis':
        return { status: 200, type: 'text/html; charset=Shift_JIS', body: this.cached(path, sjisPage) };
      case '/bom-utf16':
        return { status: 200, type: 'text/html', body: this.cached(path, utf16Page) };
      case '/doc.pdf':
        return { status: 200, type: 'application/pdf', body: this.cached(path, buildPdf) };
      case '/etag':
        return this.etag(req, res);
      case '/flaky-500':
        if (method === 'GET' && this.flakyGets++ < o.flakyFailures) return { status: 500, type: TEXT, body: 'internal server error (flaky)\n' };
        return { status: 200, type: HTML, body: simplePage('Flaky page', '<p>It works now.</p>') };
      default:
        return NOT_FOUND;
    }
  }

  private endless(res: ServerResponse): null {
    const line = '<p>and it goes on and on and on</p>\n';
    const chunk = this.cached('endless-chunk', () => Buffer.from(line.repeat(Math.max(1, Math.round(this.options.endlessChunkBytes / line.length)))));
    res.writeHead(200, { 'content-type': HTML, 'cache-control': 'no-store' });
    res.write('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Endless</title>\n</head>\n<body>\n');
    const timer = setInterval(() => {
      // Skips a tick while the client isn't reading: the server never buffers more than a chunk or two.
      if (res.destroyed) clearInterval(timer);
      else if (!res.writableNeedDrain) res.write(chunk);
    }, this.options.endlessIntervalMs);
    res.once('close', () => clearInterval(timer));
    return null;
  }

  private drip(res: ServerResponse): null {
    const prefix = '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Drip</title></head><body><p>';
    const filler = 'drip ';
    let i = 0;
    const byte = () => {
      const ch = i < prefix.length ? prefix[i] : filler[(i - prefix.length) % filler.length];
      i++;
      return ch as string;
    };
    res.writeHead(200, { 'content-type': HTML, 'cache-control': 'no-store' });
    res.write(byte());
    const timer = setInterval(() => {
      if (res.destroyed) clearInterval(timer);
      else res.write(byte());
    }, this.options.dripIntervalMs);
    res.once('close', () => clearInterval(timer));
    return null;
  }

  private bomb(res: ServerResponse, encoding: 'gzip' | 'br'): null {
    compressionBomb(encoding, this.options.bombBytes).then(
      (body) => {
        if (res.destroyed) return;
        res.writeHead(200, { 'content-type': HTML, 'content-encoding': encoding, 'content-length': String(body.length), vary: 'Accept-Encoding' });
        res.end(body);
      },
      () => res.destroy(),
    );
    return null;
  }

  /** Content-Length says CL_SHORT_DECLARED; CL_SHORT_SENT bytes go out, then the socket is destroyed. */
  private clShort(res: ServerResponse): null {
    const body = Buffer.from(simplePage('Short body', `<p>${'this page is cut short '.repeat(100)}</p>`).slice(0, CL_SHORT_SENT));
    res.writeHead(200, { 'content-type': HTML, 'content-length': String(CL_SHORT_DECLARED) });
    res.write(body, () => res.socket?.destroy());
    return null;
  }

  private clLong(req: IncomingMessage, ctx: HostileContext): null {
    const page = simplePage('Long body', `<p>${'more bytes than declared '.repeat(100)}</p>`);
    const body = Buffer.from(page.slice(0, CL_LONG_SENT));
    const head = `HTTP/1.1 200 OK\r\nContent-Type: ${HTML}\r\nContent-Length: ${CL_LONG_DECLARED}\r\nConnection: close\r\n\r\n`;
    rawResponse(req.socket, ctx, 200, Buffer.concat([Buffer.from(head), req.method === 'HEAD' ? Buffer.alloc(0) : body]));
    return null;
  }

  private badChunked(req: IncomingMessage, ctx: HostileContext): null {
    const first = '<!DOCTYPE html>\n<html lang="en">\n<head><title>Bad chunks</title></head>\n<body>\n';
    const raw = [
      `HTTP/1.1 200 OK\r\nContent-Type: ${HTML}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      `${Buffer.byteLength(first).toString(16)}\r\n${first}\r\n`,
      `${BAD_CHUNK_SIZE_LINE}\r\n<p>this chunk has no valid size</p>\r\n`,
      '0\r\n\r\n',
    ].join('');
    rawResponse(req.socket, ctx, 200, Buffer.from(raw));
    return null;
  }

  /** Headers and RESET_SENT bytes, then a TCP RST RESET_AFTER_MS later. */
  private reset(res: ServerResponse): null {
    res.writeHead(200, { 'content-type': HTML, 'content-length': String(RESET_DECLARED) });
    res.write(Buffer.from(simplePage('Reset', `<p>${'the connection will be reset '.repeat(100)}</p>`).slice(0, RESET_SENT)));
    const socket = res.socket;
    const timer = setTimeout(() => {
      if (socket && !socket.destroyed) socket.resetAndDestroy();
    }, RESET_AFTER_MS);
    res.once('close', () => clearTimeout(timer));
    return null;
  }

  /** RFC 9110 §13.1: If-None-Match decides when present (weak comparison, "*" matches); else If-Modified-Since. */
  private etag(req: IncomingMessage, res: ServerResponse): HostileSimpleResponse | null {
    const headers = { etag: HOSTILE_ETAG, 'last-modified': HOSTILE_LAST_MODIFIED, 'cache-control': 'max-age=0' };
    const inm = req.headers['if-none-match'];
    const ims = req.headers['if-modified-since'];
    let notModified: boolean;
    if (inm !== undefined) {
      const tags = inm.split(',').map((t) => t.trim().replace(/^W\//, ''));
      notModified = tags.includes('*') || tags.includes(HOSTILE_ETAG);
    } else {
      const since = ims === undefined ? NaN : Date.parse(ims);
      notModified = !Number.isNaN(since) && since >= Date.parse(HOSTILE_LAST_MODIFIED);
    }
    if (notModified) {
      res.writeHead(304, headers);
      res.end();
      return null;
    }
    return { status: 200, type: HTML, body: simplePage('Validators', '<p>This page has an ETag and a Last-Modified date.</p>'), headers };
  }
}
