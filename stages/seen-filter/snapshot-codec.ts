import { createHash } from 'node:crypto';
import { BloomSlice, ScalableBloomFilter } from './bloom-filter.js';
import { KEY_STRIDE, PartitionSeenSet, type Decision } from './partition-seen-set.js';

/**
 * Binary form of one partition's seen set:
 *   "SEEN" | version u8 | hash version u8 | flags u16 | partition u32 | settled seq f64
 *   | slices u32 | per slice: capacity f64, count f64, hashes u32, bytes u32, bits
 *   | unsettled u32 | per entry: key f64, decision u8
 *   | first 8 bytes of the SHA-256 of all the above
 * Little-endian. The checksum turns a torn or mixed-up snapshot into a clear error rather
 * than a filter that silently forgets URLs. An entry's key is the candidate's (stream
 * sequence, place in its message), partition-seen-set.ts KEY_STRIDE; version 1, from before
 * messages carried several candidates, stored the sequence alone (place 0), and is still read.
 * Flags: bit 0 set when every URL in the filter has its key in the exact record (the set
 * confirms Bloom hits there); a set begun by a version without the exact record has it clear,
 * and that version, reading a snapshot of this one, ignores it and writes it clear.
 */
const MAGIC = 0x4e454553; // "SEEN" read as little-endian u32
const VERSION = 2;
const READABLE_VERSIONS = new Set([1, 2]);
/** bloom-filter.ts hashKey: bump when the hash or the position scheme changes */
const HASH_VERSION = 1;
const DECISIONS: readonly Decision[] = ['admitted', 'over_limit', 'unknown'];
const CONFIRMS_HITS = 1;

export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

export function encodeSnapshot(partition: number, set: PartitionSeenSet): Uint8Array {
  const slices = set.filter.slices;
  const unsettled = [...set.unsettledEntries()];
  const size = 20 + 4 + slices.reduce((n, s) => n + 24 + s.bits.length, 0) + 4 + unsettled.length * 9 + 8;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let at = 0;
  view.setUint32(at, MAGIC, true);
  view.setUint8(at + 4, VERSION);
  view.setUint8(at + 5, HASH_VERSION);
  view.setUint16(at + 6, set.confirmsHits ? CONFIRMS_HITS : 0, true);
  view.setUint32(at + 8, partition, true);
  view.setFloat64(at + 12, set.settledSeq, true);
  at += 20;
  view.setUint32(at, slices.length, true);
  at += 4;
  for (const s of slices) {
    view.setFloat64(at, s.capacity, true);
    view.setFloat64(at + 8, s.count, true);
    view.setUint32(at + 16, s.hashes, true);
    view.setUint32(at + 20, s.bits.length, true);
    out.set(s.bits, at + 24);
    at += 24 + s.bits.length;
  }
  view.setUint32(at, unsettled.length, true);
  at += 4;
  for (const e of unsettled) {
    view.setFloat64(at, e.key, true);
    view.setUint8(at + 8, DECISIONS.indexOf(e.decision));
    at += 9;
  }
  out.set(checksum(out.subarray(0, at)), at);
  return out;
}

export function decodeSnapshot(data: Uint8Array, partition: number): PartitionSeenSet {
  if (data.length < 36) throw new SnapshotError(`seen-set snapshot of partition ${partition}: ${data.length} bytes is too short`);
  const body = data.subarray(0, data.length - 8);
  if (!Buffer.from(checksum(body)).equals(Buffer.from(data.subarray(data.length - 8)))) {
    throw new SnapshotError(`seen-set snapshot of partition ${partition}: checksum mismatch (torn or corrupted)`);
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint32(0, true) !== MAGIC) throw new SnapshotError(`seen-set snapshot of partition ${partition}: not a seen-set snapshot`);
  const version = view.getUint8(4);
  const hashVersion = view.getUint8(5);
  if (!READABLE_VERSIONS.has(version) || hashVersion !== HASH_VERSION) {
    throw new SnapshotError(`seen-set snapshot of partition ${partition}: version ${version}/hash ${hashVersion}, this build reads versions ${[...READABLE_VERSIONS].join(" and ")} with hash ${HASH_VERSION}`);
  }
  const stored = view.getUint32(8, true);
  if (stored !== partition) throw new SnapshotError(`seen-set snapshot: holds partition ${stored}, expected ${partition}`);
  const settledSeq = view.getFloat64(12, true);
  const confirmsHits = (view.getUint16(6, true) & CONFIRMS_HITS) !== 0;
  let at = 20;
  const need = (n: number) => {
    if (at + n > body.length) throw new SnapshotError(`seen-set snapshot of partition ${partition}: truncated at byte ${at}`);
  };
  need(4);
  const sliceCount = view.getUint32(at, true);
  at += 4;
  const slices: BloomSlice[] = [];
  for (let i = 0; i < sliceCount; i++) {
    need(24);
    const capacity = view.getFloat64(at, true);
    const count = view.getFloat64(at + 8, true);
    const hashes = view.getUint32(at + 16, true);
    const bytes = view.getUint32(at + 20, true);
    need(24 + bytes);
    // a copy, so the filter does not pin the whole snapshot buffer
    slices.push(new BloomSlice(capacity, hashes, data.slice(at + 24, at + 24 + bytes), count));
    at += 24 + bytes;
  }
  const set = new PartitionSeenSet(new ScalableBloomFilter(slices), settledSeq, confirmsHits);
  need(4);
  const entries = view.getUint32(at, true);
  at += 4;
  need(entries * 9);
  for (let i = 0; i < entries; i++) {
    const decision = DECISIONS[view.getUint8(at + 8)];
    if (!decision) throw new SnapshotError(`seen-set snapshot of partition ${partition}: bad decision code at byte ${at + 8}`);
    const stored = view.getFloat64(at, true);
    set.restoreUnsettled(version === 1 ? stored * KEY_STRIDE : stored, decision);
    at += 9;
  }
  return set;
}

function checksum(bytes: Uint8Array): Uint8Array {
  return createHash('sha256').update(bytes).digest().subarray(0, 8);
}
