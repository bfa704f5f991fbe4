/**
 * Reading a response body: Content-Encoding decoded as a stream (gzip, deflate raw or
 * wrapped, br), with a hard cap on decoded bytes and a check for decompression bombs.
 */
import { Readable, pipeline } from 'node:stream';
import zlib from 'node:zlib';
import { HttpFetchError } from '../../../ports/http.js';

/** Decoded size from which the ratio check applies. */
const BOMB_CHECK_FROM_BYTES = 1024 * 1024;

export type ByteSource = AsyncIterable<Buffer>;

function looksLikeZlibHeader(b: Buffer): boolean {
  if (b.length < 2) return b.length === 1 ? (b[0]! & 0x0f) === 8 : true;
  return (b[0]! & 0x0f) === 8 && ((b[0]! << 8) | b[1]!) % 31 === 0;
}

function makeDecoder(encoding: string, first: Buffer): zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress {
  // Lenient about truncated input (like browsers/curl): flush what we have instead of failing.
  const zopts = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(zopts);
    case 'deflate':
      // RFC 9110 says zlib-wrapped; some servers send raw deflate.
      return looksLikeZlibHeader(first) ? zlib.createInflate(zopts) : zlib.createInflateRaw(zopts);
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      throw new Error(`unsupported content-encoding ${encoding}`);
  }
}

/** Lazily (on the first input byte, so empty bodies decode to empty) pipe `src` through a decoder. */
function decodeStage(
  src: ByteSource,
  encoding: string,
  live: Set<{ destroy(): unknown }>,
  decodeErrors: WeakSet<Error>,
  onDecoder: (d: zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress) => void = () => {},
): ByteSource {
  return (async function* () {
    const it = src[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done) return;
    const decoder = makeDecoder(encoding, first.value);
    onDecoder(decoder);
    decoder.once('error', (e) => decodeErrors.add(e));
    live.add(decoder);
    const input = Readable.from(
      (async function* () {
        yield first.value;
        for (;;) {
          const n = await it.next();
          if (n.done) return;
          yield n.value;
        }
      })(),
      { objectMode: false },
    );
    live.add(input);
    pipeline(input, decoder, () => {}); // errors surface through the decoder
    yield* decoder as AsyncIterable<Buffer>;
  })();
}

export function parseContentEncoding(v: string | undefined): string[] | null {
  if (v === undefined) return [];
  const codings = v
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '' && s !== 'identity');
  const known = new Set(['gzip', 'x-gzip', 'deflate', 'br']);
  return codings.every((c) => known.has(c)) ? codings : null; // null: leave body as is
}

export interface CappedBody {
  body: Buffer;
  truncated: boolean;
}

/**
 * The body, decoded, at most `maxBytes`. `codings` are the Content-Encodings in the order
 * applied (null: unknown ones, the body is kept as sent). A compressed body inflating more
 * than `maxRatio` times the compressed bytes read (past 1 MB) is refused. Streams it opens
 * are added to `live`, for the caller to destroy; decoder errors to `decodeErrors`.
 */
export async function readCappedBody(
  raw: ByteSource,
  codings: string[] | null,
  o: { url: string; maxBytes: number; maxRatio: number; rawBytes: () => number; live: Set<{ destroy(): unknown }>; decodeErrors: WeakSet<Error> },
): Promise<CappedBody> {
  let source: ByteSource = raw;
  // the decoder reading the raw body: its bytesWritten is the compressed input it has
  // actually inflated (the raw count also has bytes still waiting in stream buffers)
  let rawDecoder: { bytesWritten: number } | null = null;
  if (codings !== null) {
    for (const c of [...codings].reverse()) {
      const first = rawDecoder === null && source === raw;
      source = decodeStage(source, c, o.live, o.decodeErrors, first ? (d) => (rawDecoder = d) : undefined);
    }
  }
  const cap = Math.max(0, o.maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  const compressed = codings !== null && codings.length > 0;
  for await (const chunk of source) {
    const consumed = (rawDecoder as { bytesWritten: number } | null)?.bytesWritten ?? o.rawBytes();
    if (compressed && size + chunk.length > BOMB_CHECK_FROM_BYTES && size + chunk.length > o.maxRatio * Math.max(1, consumed)) {
      throw new HttpFetchError(
        'protocol',
        `fetching ${o.url}: decompression bomb: ${consumed} compressed bytes inflate to more than ${size + chunk.length} (ratio over ${o.maxRatio})`,
      );
    }
    if (size + chunk.length > cap) {
      const room = cap - size;
      if (room > 0) chunks.push(chunk.subarray(0, room));
      size = cap;
      truncated = true;
      break; // return()s the iterator chain; the caller destroys everything
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), truncated };
}
