import { KvConflictError, type KvStore } from '../../../ports/kv.js';
import { casUpdate, jsonValue, parseJsonValue } from '../../../pipeline/kv-store.js';
import type { StageContext } from '../../../pipeline/stage.js';
import type { CandidateUrl } from '../../../schemas/index.js';
import { oncePerObject } from '../once-per-object.js';
import { KnownSet } from './known-set.js';

/**
 * Seed 003's first pass (`--target-unique-domains N`): until N registrable domains have a
 * stored page, the crawl spends its requests on reaching new domains. A link to a domain that
 * already has a URL admitted is admitted *held*: it waits in its host's held lane (host-lanes.ts),
 * is not counted against --max-pages, and is served once the pass ends; so nothing is lost,
 * only put off. Seeds are never held. It applies to the crawl's own URLs, not to crawl jobs'.
 *
 * What is kept, all global across processes (so any number of seen-filters and gates agree):
 * - `crawl-seen` `_fp.claim.<crawl>.<domain>`: the domain has a URL admitted (created once,
 *   by the seen-filter that admits its first URL; a create that finds it says "not new");
 * - `crawl-traps` `_fp.stored.<crawl>.<domain>`: the domain has a stored page, and
 *   `_fp.count.<crawl>`: how many domains do (simhash writes both, once per domain).
 * Each process remembers the domains it has claimed or counted (bounded), so a page or a link
 * costs a KV write only the first time this process meets its domain; the count is read at
 * most once a second per process, and once the pass is over it stays over.
 */
const claimKey = (crawl: string, domain: string) => `_fp.claim.${crawl}.${domain}`;
const storedKey = (crawl: string, domain: string) => `_fp.stored.${crawl}.${domain}`;
const countKey = (crawl: string) => `_fp.count.${crawl}`;

/** How often a process reads the number of domains with a stored page while the pass is on. */
const COUNT_READ_MS = 1000;

interface PassState {
  claimed: KnownSet;
  stored: KnownSet;
  over: boolean;
  /** held lanes served although the pass may not be over (heldLanesWait) */
  released: boolean;
  count: number;
  readAt: number;
  reading: Promise<void> | null;
}

const stateOf = oncePerObject((_ctx: StageContext): PassState => ({ claimed: new KnownSet(), stored: new KnownSet(), over: false, released: false, count: 0, readAt: -Infinity, reading: null }));

/** Whether the crawl's first pass is on: a target is set and fewer domains than it have a stored page. */
export async function firstPassOn(ctx: StageContext): Promise<boolean> {
  const target = ctx.settings.targetUniqueDomains;
  if (target <= 0) return false;
  const state = stateOf(ctx);
  if (state.over) return false;
  const now = ctx.clock.now();
  if (now - state.readAt >= COUNT_READ_MS) {
    state.readAt = now;
    state.reading ??= readCount(ctx.kv.traps, ctx.settings.crawlId)
      .then((count) => {
        state.count = Math.max(state.count, count);
      })
      .finally(() => (state.reading = null));
    await state.reading;
  }
  if (state.count >= target) state.over = true;
  return !state.over;
}

/** Domains with a stored page so far (the first pass's progress). */
export async function storedDomains(kv: KvStore, crawl: string): Promise<number> {
  return readCount(kv, crawl);
}

async function readCount(kv: KvStore, crawl: string): Promise<number> {
  const entry = await kv.get(countKey(crawl));
  return entry ? parseJsonValue<number>(entry.value) : 0;
}

/**
 * Of a seen-filter's new candidates, the indexes of those held by the first pass: links (and
 * sitemaps' URLs), not a job's, to a domain that already has a URL admitted (by this batch or before).
 */
export async function heldByFirstPass(ctx: StageContext, candidates: readonly CandidateUrl[]): Promise<Set<number>> {
  const held = new Set<number>();
  if (candidates.length === 0 || !(await firstPassOn(ctx))) return held;
  const crawl = ctx.settings.crawlId;
  const state = stateOf(ctx);
  for (const [i, c] of candidates.entries()) {
    if (c.job !== undefined) continue;
    const isNew = await claim(ctx.kv.seen, state.claimed, crawl, c.domain);
    if (!isNew && holdable(c)) held.add(i);
  }
  return held;
}

/**
 * Links and what sitemaps list may wait; a seed never does, nor a redirect's target (it goes on
 * with a request already spent: `http://a.test/` → `https://a.test/` would otherwise leave the
 * domain without a stored page), nor a sitemap itself.
 */
const holdable = (c: CandidateUrl) => c.via === 'link' || (c.via === 'sitemap' && c.fetch_as !== 'sitemap');

/** Claims the domain for the first URL admitted to it; false when it was claimed already. */
async function claim(kv: KvStore, known: KnownSet, crawl: string, domain: string): Promise<boolean> {
  if (known.has(domain)) return false;
  const created = await createOnce(kv, claimKey(crawl, domain));
  known.add(domain);
  return created;
}

/** A stored page of the domain (simhash: the page goes to the pages table): counted once per domain. */
export async function noteStoredDomain(ctx: StageContext, m: { domain: string; job?: string | undefined }): Promise<void> {
  if (ctx.settings.targetUniqueDomains <= 0 || m.job !== undefined) return;
  const state = stateOf(ctx);
  if (state.stored.has(m.domain)) return;
  const crawl = ctx.settings.crawlId;
  if (await createOnce(ctx.kv.traps, storedKey(crawl, m.domain))) {
    await casUpdate<number, void>(ctx.kv.traps, countKey(crawl), (count) => ({ value: (count ?? 0) + 1, result: undefined }));
  }
  state.stored.add(m.domain);
}

async function createOnce(kv: KvStore, key: string): Promise<boolean> {
  try {
    await kv.create(key, jsonValue(1));
    return true;
  } catch (err) {
    if (err instanceof KvConflictError) return false;
    throw err;
  }
}

/**
 * Whether held lanes wait: the pass is on, and this process has not let them go (a gate with
 * nothing else to serve lets its held hosts go: the pass cannot reach its target from here).
 */
export async function heldLanesWait(ctx: StageContext): Promise<boolean> {
  return !stateOf(ctx).released && (await firstPassOn(ctx));
}

/** This process serves its held lanes from now on, the pass over or not. */
export function releaseHeldLanes(ctx: StageContext): void {
  stateOf(ctx).released = true;
}
