import { BUCKETS, SUBJECTS } from '../topology/index.js';
import { kvKey } from '../pipeline/adapters/nats-kv.js';
import type { Publisher } from '../ports/streams.js';
import { encodeSeedLines } from '../schemas/index.js';
import { canonicalize, seedScopeKeys } from '../stages/normalize/index.js';

/**
 * Seeds per message on crawl.seeds, one URL a line: normalize puts a whole message's scope in
 * before it passes any of its seeds on. 1,000 URLs of a typical seed list are ~50 KB; the byte
 * bound keeps a list of long URLs (up to 2,048 characters each) under any server's max_payload
 * (1 MB by default).
 */
const SEEDS_PER_MESSAGE = 1_000;
const SEED_MESSAGE_BYTES = 256 * 1024;

/** `urls` in runs of at most SEEDS_PER_MESSAGE and about SEED_MESSAGE_BYTES (canonical URLs are ASCII). */
function seedMessages(urls: readonly string[]): string[][] {
  const out: string[][] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const url of urls) {
    if (batch.length > 0 && (batch.length >= SEEDS_PER_MESSAGE || bytes + url.length + 1 > SEED_MESSAGE_BYTES)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(url);
    bytes += url.length + 1;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}
/** KV puts in flight at once while registering a seed list's scope. */
const PUTS_AT_ONCE = 64;
const PRESENT = new TextEncoder().encode('1');

/**
 * Starts (or feeds) a crawl with `urls`: first every seed's scope keys (its registrable domain,
 * host and prefix, the keys normalize would put there itself) in the `crawl-scope` bucket, then
 * the seeds. So no link found from one seed is judged before another seed's scope is known,
 * whatever order normalize takes the messages in: a URL gets one outcome.
 *
 * The keys are put by publishing to the bucket's subjects (what a KV put is), which a seeding
 * user may do: it adds nothing a seed would not add itself. A user who may not (a cluster whose
 * accounts predate this) still seeds: the answer carries why the scope was not put first, and
 * then only seeds in different messages (past SEEDS_PER_MESSAGE) can race each other's links.
 */
export async function publishSeeds(publisher: Publisher, urls: readonly string[]): Promise<{ scopeNotPut?: Error }> {
  const keys = new Set<string>();
  for (const url of urls) {
    const c = canonicalize(url);
    if (c.ok) for (const k of seedScopeKeys(c)) keys.add(k);
  }
  const all = [...keys];
  let scopeNotPut: Error | undefined;
  try {
    for (let i = 0; i < all.length; i += PUTS_AT_ONCE) {
      await publisher.publish(all.slice(i, i + PUTS_AT_ONCE).map((k) => ({ subject: `$KV.${BUCKETS.scope}.${kvKey(k)}`, data: PRESENT })));
    }
  } catch (err) {
    scopeNotPut = err as Error;
  }
  // no msgId: the same seeds sent again are a request to crawl them again (the seen filter decides)
  for (const batch of seedMessages(urls)) await publisher.publish([{ subject: SUBJECTS.seeds, data: encodeSeedLines(batch) }]);
  return scopeNotPut ? { scopeNotPut } : {};
}
