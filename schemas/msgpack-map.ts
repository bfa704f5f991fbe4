/**
 * Reading some fields of a msgpack map, and adding fields to it, without decoding the rest:
 * the simhash stage needs a page's small fields (its URL, digest, fingerprint) and hands the
 * page on with its verdict added, and decoding and encoding the text and links it never
 * looks at was a twentieth of a one-process crawl's main thread. msgpackr has no way to skip
 * a value, so the walk over value boundaries is here (the format's own length prefixes).
 */
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, moreTypes: false });

export class MsgpackFormatError extends Error {
  override name = 'MsgpackFormatError';
}

/** A top-level map's layout: where its pairs start, how many there are, and its keys. */
export interface MapLayout {
  count: number;
  pairsStart: number;
  keys: Set<string>;
}

/** Bytes past the end of the message. */
function need(bytes: Uint8Array, end: number): number {
  if (end > bytes.length) throw new MsgpackFormatError('truncated message');
  return end;
}

const u16 = (b: Uint8Array, p: number) => (b[p]! << 8) | b[p + 1]!;
const u32 = (b: Uint8Array, p: number) => ((b[p]! << 24) >>> 0) + (b[p + 1]! << 16) + (b[p + 2]! << 8) + b[p + 3]!;

/** The position after the value that starts at `pos` (nested arrays and maps included). */
export function skipValue(bytes: Uint8Array, pos: number): number {
  let pending = 1;
  while (pending > 0) {
    pending -= 1;
    const t = bytes[need(bytes, pos + 1) - 1]!;
    if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) pos += 1;
    else if (t <= 0x8f) (pending += 2 * (t & 0x0f)), (pos += 1);
    else if (t <= 0x9f) (pending += t & 0x0f), (pos += 1);
    else if (t <= 0xbf) pos += 1 + (t & 0x1f);
    else {
      switch (t) {
        case 0xc4: case 0xd9: pos += 2 + bytes[need(bytes, pos + 2) - 1]!; break; // bin8, str8
        case 0xc5: case 0xda: need(bytes, pos + 3); pos += 3 + u16(bytes, pos + 1); break; // bin16, str16
        case 0xc6: case 0xdb: need(bytes, pos + 5); pos += 5 + u32(bytes, pos + 1); break; // bin32, str32
        case 0xc7: pos += 3 + bytes[need(bytes, pos + 2) - 1]!; break; // ext8
        case 0xc8: need(bytes, pos + 3); pos += 4 + u16(bytes, pos + 1); break; // ext16
        case 0xc9: need(bytes, pos + 5); pos += 6 + u32(bytes, pos + 1); break; // ext32
        case 0xca: pos += 5; break;
        case 0xcb: pos += 9; break;
        case 0xcc: case 0xd0: pos += 2; break;
        case 0xcd: case 0xd1: pos += 3; break;
        case 0xce: case 0xd2: pos += 5; break;
        case 0xcf: case 0xd3: pos += 9; break;
        case 0xd4: pos += 3; break; // fixext 1..16
        case 0xd5: pos += 4; break;
        case 0xd6: pos += 6; break;
        case 0xd7: pos += 10; break;
        case 0xd8: pos += 18; break;
        case 0xdc: need(bytes, pos + 3); pending += u16(bytes, pos + 1); pos += 3; break; // array16
        case 0xdd: need(bytes, pos + 5); pending += u32(bytes, pos + 1); pos += 5; break; // array32
        case 0xde: need(bytes, pos + 3); pending += 2 * u16(bytes, pos + 1); pos += 3; break; // map16
        case 0xdf: need(bytes, pos + 5); pending += 2 * u32(bytes, pos + 1); pos += 5; break; // map32
        default: throw new MsgpackFormatError(`byte 0x${t.toString(16)} at ${pos} starts no value`);
      }
    }
  }
  return need(bytes, pos);
}

function mapHeader(bytes: Uint8Array): { count: number; pairsStart: number } {
  const t = bytes[need(bytes, 1) - 1]!;
  if (t >= 0x80 && t <= 0x8f) return { count: t & 0x0f, pairsStart: 1 };
  if (t === 0xde) return { count: u16(bytes, 1), pairsStart: need(bytes, 3) };
  if (t === 0xdf) return { count: u32(bytes, 1), pairsStart: need(bytes, 5) };
  throw new MsgpackFormatError('not a map');
}

/** A string key's text, or null when the key is not a string (such a map is left to msgpackr). */
function keyAt(bytes: Uint8Array, pos: number, end: number): string | null {
  const t = bytes[pos]!;
  const start = t >= 0xa0 && t <= 0xbf ? pos + 1 : t === 0xd9 ? pos + 2 : t === 0xda ? pos + 3 : t === 0xdb ? pos + 5 : -1;
  if (start < 0) return null;
  let s = '';
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    if (c > 0x7f) return Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8');
    s += String.fromCharCode(c);
  }
  return s;
}

/**
 * The map's fields but those named in `skip`, decoded, and its layout. Throws
 * MsgpackFormatError for bytes that are not a well-formed map with string keys.
 */
export function readMapExcept(bytes: Uint8Array, skip: ReadonlySet<string>): { fields: Record<string, unknown>; layout: MapLayout } {
  const { count, pairsStart } = mapHeader(bytes);
  const keys = new Set<string>();
  const kept: Array<[number, number]> = [];
  let keptBytes = 0;
  let pos = pairsStart;
  for (let i = 0; i < count; i++) {
    const keyEnd = skipValue(bytes, pos);
    const key = keyAt(bytes, pos, keyEnd);
    if (key === null) throw new MsgpackFormatError('a key that is not a string');
    const valueEnd = skipValue(bytes, keyEnd);
    keys.add(key);
    if (!skip.has(key)) {
      kept.push([pos, valueEnd]);
      keptBytes += valueEnd - pos;
    }
    pos = valueEnd;
  }
  // the kept pairs as a map of their own, decoded by msgpackr at once
  const head = Buffer.allocUnsafe(5 + keptBytes);
  head[0] = 0xdf;
  head.writeUInt32BE(kept.length, 1);
  let at = 5;
  for (const [s, e] of kept) {
    head.set(bytes.subarray(s, e), at);
    at += e - s;
  }
  return { fields: packr.unpack(head) as Record<string, unknown>, layout: { count, pairsStart, keys } };
}

/** The map with `extra`'s fields added after its own (none of which it may have already). */
export function withFieldsAdded(bytes: Uint8Array, layout: MapLayout, extra: Record<string, unknown>): Uint8Array {
  const added = Object.keys(extra).filter((k) => extra[k] !== undefined);
  for (const k of added) if (layout.keys.has(k)) throw new MsgpackFormatError(`the message has ${k} already`);
  const pairs = packr.pack(Object.fromEntries(added.map((k) => [k, extra[k]])));
  const pairsOfExtra = pairs.subarray(mapHeader(pairs).pairsStart);
  const body = bytes.subarray(layout.pairsStart);
  const out = Buffer.allocUnsafe(5 + body.length + pairsOfExtra.length);
  out[0] = 0xdf;
  out.writeUInt32BE(layout.count + added.length, 1);
  out.set(body, 5);
  out.set(pairsOfExtra, 5 + body.length);
  return out;
}
