import { hashKey, ScalableBloomFilter } from './bloom-filter.js';

/**
 * What was decided for a candidate whose message is not yet known to be acked:
 * - admitted / over_limit: decided by this process; a redelivery repeats the decision;
 * - unknown: learnt from replaying the stream after a takeover; the previous owner may or
 *   may not have published its decision, so a redelivery decides again (same fetch id).
 */
export type Decision = 'admitted' | 'over_limit' | 'unknown';

export type Verdict =
  /** never seen: added now, decide and publish */
  | { kind: 'new' }
  /** this very message was handled before but may not have been acked: repeat */
  | { kind: 'again'; decision: Decision }
  /** another message carried this URL before (or a Bloom false positive) */
  | { kind: 'seen' };

/**
 * A message may carry several candidates (schemas/url-batches.ts), so what is remembered per
 * message is per candidate: its key is the stream sequence times this stride plus the
 * candidate's place in the message. Exact in a double while sequences stay under 2^43.
 */
export const KEY_STRIDE = 1024;
const keyOf = (seq: number, index: number) => seq * KEY_STRIDE + index;

/**
 * The seen set of one partition of one crawl: a scalable Bloom filter of URLs, plus the
 * messages above the consumer's ack floor that may come again (a crash before the ack, a
 * nak after a failed publish). Those are few (the new URLs since the ack floor was last
 * read, every few seconds), and they are what lets a redelivery be told apart from a second
 * message with the same URL.
 */
export class PartitionSeenSet {
  /**
   * (stream sequence, place in the message) → decision, for messages above the ack floor
   * (keyOf). The sequence and place are the key: a redelivery has the same sequence (and so
   * the same URLs in the same places) as the first delivery.
   */
  private readonly unsettled = new Map<number, Decision>();
  /** URLs added since the last snapshot (the snapshot schedule counts these) */
  addedSinceSnapshot = 0;

  constructor(
    readonly filter: ScalableBloomFilter,
    /** every message of the partition up to this stream sequence is in the filter */
    public settledSeq: number,
  ) {}

  /** `expected`: this partition's even share of the planned URLs; 10 % headroom within the same bits for uneven shares */
  static empty(expected: number, settledSeq: number): PartitionSeenSet {
    return new PartitionSeenSet(ScalableBloomFilter.create(expected, PARTITION_HEADROOM), settledSeq);
  }

  /** Decides for the candidate at `index` of a delivered message; a `new` URL is added to the filter at once. */
  check(url: string, seq: number, index = 0): Verdict {
    const key = keyOf(seq, index);
    const earlier = this.unsettled.get(key);
    if (earlier) return { kind: 'again', decision: earlier };
    if (!this.filter.add(hashKey(url))) return { kind: 'seen' };
    this.addedSinceSnapshot += 1;
    this.unsettled.set(key, 'unknown');
    return { kind: 'new' };
  }

  /** Records the decision for a candidate of a message, so a redelivery of it repeats it. */
  decide(seq: number, decision: Decision, index = 0): void {
    this.unsettled.set(keyOf(seq, index), decision);
  }

  /**
   * Replays one stored message after a takeover. Every message is added to the filter;
   * one above the ack floor may be redelivered, and is remembered as `unknown` unless the
   * snapshot knew its decision.
   */
  replay(url: string, seq: number, ackFloor: number, index = 0): void {
    if (this.filter.add(hashKey(url))) this.addedSinceSnapshot += 1;
    const key = keyOf(seq, index);
    if (seq > ackFloor && !this.unsettled.has(key)) this.unsettled.set(key, 'unknown');
  }

  /** Forgets messages at or below the ack floor: the server will not deliver them again. */
  settle(ackFloor: number): void {
    // Map iteration is in insertion order, which is roughly sequence order: stop early is not
    // safe (handlers finish out of order), but the map holds only the unacked window
    const below = keyOf(ackFloor + 1, 0);
    for (const key of this.unsettled.keys()) if (key < below) this.unsettled.delete(key);
    this.settledSeq = Math.max(this.settledSeq, ackFloor);
  }

  /** the unsettled candidates (their keys: see KEY_STRIDE), for the snapshot */
  *unsettledEntries(): Iterable<{ key: number; decision: Decision }> {
    for (const [key, decision] of this.unsettled) yield { key, decision };
  }

  restoreUnsettled(key: number, decision: Decision): void {
    this.unsettled.set(key, decision);
  }

  get unsettledCount(): number {
    return this.unsettled.size;
  }
}

/** a partition's filter takes 10 % more than its even share in the same 2 bytes per planned URL */
export const PARTITION_HEADROOM = 1.1;
