import { hashKey, ScalableBloomFilter } from './bloom-filter.js';
import { RecentKeys } from './recent-keys.js';

/**
 * What was decided for a candidate whose message is not yet known to be acked:
 * - admitted / over_limit: decided by this process; a redelivery repeats the decision;
 * - unknown: learnt from replaying the stream after a takeover, or claimed by this process and
 *   not yet decided; a redelivery decides again (same fetch id).
 */
export type Decision = 'admitted' | 'over_limit' | 'unknown';

export type Verdict =
  /** never seen (a Bloom miss is certain): added now; decide, record its exact key, publish */
  | { kind: 'new' }
  /** this very message was handled before but may not have been acked: repeat */
  | { kind: 'again'; decision: Decision }
  /** another message carried this URL before: known for certain (see `check`) */
  | { kind: 'seen'; by: 'recent' | 'unsettled' | 'bloom' }
  /** a Bloom hit on a key this process does not know: ask the exact record, then `resolve` */
  | { kind: 'unconfirmed' };

/**
 * A message may carry several candidates (schemas/url-batches.ts), so what is remembered per
 * message is per candidate: its key is the stream sequence times this stride plus the
 * candidate's place in the message. Exact in a double while sequences stay under 2^43.
 */
export const KEY_STRIDE = 1024;
const keyOf = (seq: number, index: number) => seq * KEY_STRIDE + index;

/**
 * Exact keys a partition remembers as recorded (recent-keys.ts), at about 150 bytes each in
 * the heap: 4,096 a partition is ~10 MB for a process holding 16. Normalize already drops
 * the links it forwarded lately (200,000 of them), so what hits the Bloom filter here is
 * mostly a URL normalize forgot or another normalize process sent; these keys catch the
 * ones decided or read lately, the rest cost a KV read each (docs/seen-set.md).
 */
export const RECENT_KEYS_PER_PARTITION = 4_096;

interface Unsettled {
  decision: Decision;
  /** the candidate's exact key (exact-key.ts); unknown for an entry read from a snapshot until the replay reaches it */
  exact?: string;
}

/**
 * The seen set of one partition of one crawl: a scalable Bloom filter of URLs in front of an
 * exact record (a KV key per URL decided, kept by the seen-filter's handler), plus the
 * messages above the consumer's ack floor that may come again (a crash before the ack, a nak
 * after a failed publish). Those are few (the new URLs since the ack floor was last read,
 * every few seconds), and they are what lets a redelivery be told apart from a second message
 * with the same URL, and a URL still being decided from a Bloom false positive.
 */
export class PartitionSeenSet {
  /**
   * (stream sequence, place in the message) → decision, for messages above the ack floor
   * (keyOf). The sequence and place are the key: a redelivery has the same sequence (and so
   * the same URLs in the same places) as the first delivery.
   */
  private readonly unsettled = new Map<number, Unsettled>();
  /** the exact keys of `unsettled`'s candidates (how many hold each): URLs being decided, which a KV read may not find yet */
  private readonly undecided = new Map<string, number>();
  /** exact keys known to be in the exact record */
  readonly recent = new RecentKeys(RECENT_KEYS_PER_PARTITION);
  /** URLs added since the last snapshot (the snapshot schedule counts these) */
  addedSinceSnapshot = 0;

  constructor(
    readonly filter: ScalableBloomFilter,
    /** every message of the partition up to this stream sequence is in the filter */
    public settledSeq: number,
    /**
     * Every URL in the filter has its key in the exact record, so a Bloom hit is confirmed
     * there. False for a set begun by a version that kept no exact record: its hits are
     * taken as seen, as that version did, and no keys are written for it.
     */
    readonly confirmsHits = true,
  ) {}

  /** `expected`: this partition's even share of the planned URLs; 10 % headroom within the same bits for uneven shares */
  static empty(expected: number, settledSeq: number): PartitionSeenSet {
    return new PartitionSeenSet(ScalableBloomFilter.create(expected, PARTITION_HEADROOM), settledSeq);
  }

  /**
   * Decides for the candidate at `index` of a delivered message, by its seen-set key (`url`)
   * and exact key. A `new` URL is added to the filter at once, and its key is then
   * `undecided` until its message settles: a concurrent message with the same URL is seen.
   */
  check(url: string, exact: string, seq: number, index = 0): Verdict {
    const key = keyOf(seq, index);
    const earlier = this.unsettled.get(key);
    if (earlier) {
      this.attach(earlier, exact);
      return { kind: 'again', decision: earlier.decision };
    }
    if (this.filter.add(hashKey(url))) {
      this.addedSinceSnapshot += 1;
      this.hold(key, 'unknown', exact);
      return { kind: 'new' };
    }
    if (this.undecided.has(exact)) return { kind: 'seen', by: 'unsettled' };
    if (this.recent.has(exact)) return { kind: 'seen', by: 'recent' };
    return this.confirmsHits ? { kind: 'unconfirmed' } : { kind: 'seen', by: 'bloom' };
  }

  /**
   * An `unconfirmed` candidate, once the exact record answered: seen if its key is there, or
   * if another message took the URL up meanwhile; otherwise the Bloom hit was false and the
   * URL is new (to be decided and recorded like any new one).
   */
  resolve(exact: string, inRecord: boolean, seq: number, index = 0): Verdict {
    if (inRecord) {
      this.recent.add(exact);
      return { kind: 'seen', by: 'recent' };
    }
    const earlier = this.unsettled.get(keyOf(seq, index));
    if (earlier) return { kind: 'again', decision: earlier.decision };
    if (this.undecided.has(exact)) return { kind: 'seen', by: 'unsettled' };
    if (this.recent.has(exact)) return { kind: 'seen', by: 'recent' };
    this.hold(keyOf(seq, index), 'unknown', exact);
    return { kind: 'new' };
  }

  /** Records the decision for a candidate of a message, so a redelivery of it repeats it. */
  decide(seq: number, decision: Decision, index = 0): void {
    const entry = this.unsettled.get(keyOf(seq, index));
    if (entry) entry.decision = decision;
    else this.unsettled.set(keyOf(seq, index), { decision });
  }

  /** The exact record holds this key now (written by this process). */
  recorded(exact: string): void {
    this.recent.add(exact);
  }

  /**
   * Replays one stored message after a takeover. Every message is added to the filter;
   * one above the ack floor may be redelivered, and is remembered as `unknown` unless the
   * snapshot knew its decision; its URL counts as being decided (`exact`: its key, needed
   * only above the ack floor).
   */
  replay(url: string, seq: number, ackFloor: number, index = 0, exact?: string): void {
    if (this.filter.add(hashKey(url))) this.addedSinceSnapshot += 1;
    if (seq <= ackFloor) return;
    const key = keyOf(seq, index);
    const entry = this.unsettled.get(key);
    if (!entry) this.hold(key, 'unknown', exact);
    else if (exact !== undefined) this.attach(entry, exact);
  }

  /** Forgets messages at or below the ack floor: the server will not deliver them again. */
  settle(ackFloor: number): void {
    // Map iteration is in insertion order, which is roughly sequence order: stop early is not
    // safe (handlers finish out of order), but the map holds only the unacked window
    const below = keyOf(ackFloor + 1, 0);
    for (const [key, entry] of this.unsettled) {
      if (key >= below) continue;
      this.unsettled.delete(key);
      if (entry.exact !== undefined) this.release(entry.exact);
    }
    this.settledSeq = Math.max(this.settledSeq, ackFloor);
  }

  /** the unsettled candidates (their keys: see KEY_STRIDE), for the snapshot */
  *unsettledEntries(): Iterable<{ key: number; decision: Decision }> {
    for (const [key, { decision }] of this.unsettled) yield { key, decision };
  }

  restoreUnsettled(key: number, decision: Decision): void {
    this.unsettled.set(key, { decision });
  }

  get unsettledCount(): number {
    return this.unsettled.size;
  }

  private hold(key: number, decision: Decision, exact: string | undefined): void {
    this.unsettled.set(key, exact === undefined ? { decision } : { decision, exact });
    if (exact !== undefined) this.undecided.set(exact, (this.undecided.get(exact) ?? 0) + 1);
  }

  /** an entry read from a snapshot learns its exact key from the replay (or its redelivery) */
  private attach(entry: Unsettled, exact: string): void {
    if (entry.exact !== undefined) return;
    entry.exact = exact;
    this.undecided.set(exact, (this.undecided.get(exact) ?? 0) + 1);
  }

  private release(exact: string): void {
    const n = this.undecided.get(exact) ?? 0;
    if (n <= 1) this.undecided.delete(exact);
    else this.undecided.set(exact, n - 1);
  }
}

/** a partition's filter takes 10 % more than its even share in the same 2 bytes per planned URL */
export const PARTITION_HEADROOM = 1.1;
