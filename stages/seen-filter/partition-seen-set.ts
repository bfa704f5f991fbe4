import { hashKey, ScalableBloomFilter, type KeyHash } from './bloom-filter.js';

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
 * The seen set of one partition of one crawl: a scalable Bloom filter of URLs, plus the
 * messages above the consumer's ack floor that may come again (a crash before the ack, a
 * nak after a failed publish). Those are few (bounded by the consumer's max ack pending),
 * and they are what lets a redelivery be told apart from a second message with the same URL.
 */
export class PartitionSeenSet {
  /** URL key → (stream sequence → decision), for messages above the ack floor */
  private readonly unsettled = new Map<string, Map<number, Decision>>();
  /** URLs added since the last snapshot (the snapshot schedule counts these) */
  addedSinceSnapshot = 0;

  constructor(
    readonly filter: ScalableBloomFilter,
    /** every message of the partition up to this stream sequence is in the filter */
    public settledSeq: number,
  ) {}

  static empty(expected: number, settledSeq: number): PartitionSeenSet {
    return new PartitionSeenSet(ScalableBloomFilter.create(expected), settledSeq);
  }

  /** Decides for a delivered message; a `new` URL is added to the filter at once. */
  check(url: string, seq: number): Verdict {
    const h = hashKey(url);
    const earlier = this.unsettled.get(keyOf(h))?.get(seq);
    if (earlier) return { kind: 'again', decision: earlier };
    if (!this.filter.add(h)) return { kind: 'seen' };
    this.addedSinceSnapshot += 1;
    this.remember(h, seq, 'unknown');
    return { kind: 'new' };
  }

  /** Records the decision for a message, so a redelivery of it repeats it. */
  decide(url: string, seq: number, decision: Decision): void {
    this.remember(hashKey(url), seq, decision);
  }

  /**
   * Replays one stored message after a takeover. Every message is added to the filter;
   * one above the ack floor may be redelivered, and is remembered as `unknown` unless the
   * snapshot knew its decision.
   */
  replay(url: string, seq: number, ackFloor: number): void {
    const h = hashKey(url);
    if (this.filter.add(h)) this.addedSinceSnapshot += 1;
    if (seq > ackFloor && !this.unsettled.get(keyOf(h))?.has(seq)) this.remember(h, seq, 'unknown');
  }

  /** Forgets messages at or below the ack floor: the server will not deliver them again. */
  settle(ackFloor: number): void {
    for (const [key, bySeq] of this.unsettled) {
      for (const seq of bySeq.keys()) if (seq <= ackFloor) bySeq.delete(seq);
      if (bySeq.size === 0) this.unsettled.delete(key);
    }
    this.settledSeq = Math.max(this.settledSeq, ackFloor);
  }

  /** the unsettled messages, for the snapshot */
  *unsettledEntries(): Iterable<{ key: string; seq: number; decision: Decision }> {
    for (const [key, bySeq] of this.unsettled) for (const [seq, decision] of bySeq) yield { key, seq, decision };
  }

  restoreUnsettled(key: string, seq: number, decision: Decision): void {
    let bySeq = this.unsettled.get(key);
    if (!bySeq) this.unsettled.set(key, (bySeq = new Map()));
    bySeq.set(seq, decision);
  }

  get unsettledCount(): number {
    let n = 0;
    for (const bySeq of this.unsettled.values()) n += bySeq.size;
    return n;
  }

  private remember(h: KeyHash, seq: number, decision: Decision): void {
    this.restoreUnsettled(keyOf(h), seq, decision);
  }
}

/** 64 bits of the URL's hash as 16 hex digits: the unsettled map's key and its snapshot form. */
export function keyOf(h: KeyHash): string {
  return h.h1.toString(16).padStart(8, '0') + h.h2.toString(16).padStart(8, '0');
}
