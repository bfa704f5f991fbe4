import { hash } from 'node:crypto';
import { casUpdate, parseJsonValue, readingFromLeader } from '../../../pipeline/kv-store.js';
import { type KvStore } from '../../../ports/kv.js';
import type { CrawlSettings } from '../../../pipeline/settings.js';

/**
 * What the crawl-trap defences know about a host, one KV entry per host (`_b.<host>` in
 * `crawl-traps`), shared by every gate and simhash process and changed only by
 * compare-and-set. Not in `crawl-hosts`: every write there reaches every gate's watch, and
 * the gates have no use for these.
 *
 * - how many new URLs the host has had queued (the per-host page budget);
 * - per URL pattern (see url-pattern.ts): how many new URLs it produced (the pattern
 *   budget), and how many of its pages simhash saw, and how many of those were
 *   near-duplicates (content novelty).
 *
 * What a trap is, as these counts see it: a pattern whose pages lead to more of its own URLs
 * without end (an infinite calendar's days, endless pagination, a soft-404 site's made-up
 * paths), or whose pages stop being new. A shop's products or a forum's topics also share
 * one pattern by the thousand, but they are found on pages of other patterns (listings,
 * indexes, sitemaps) and each one is new. So past its budget a pattern is still followed
 * from other patterns' pages, while its own pages only lead to drops, and a URL queued past
 * the budget is looked at again before it is fetched: if its pattern's pages have turned out
 * mostly near-duplicates by then, it is dropped without a request ({@link judgeQueued}).
 *
 * Host and patterns share one entry so that a new URL costs one compare-and-set. Patterns are
 * kept by a short hash, and at most {@link MAX_PATTERNS_PER_HOST} of them: the entry stays a few
 * KB whatever the host serves. The tally belongs to one crawl: a new crawl id over the same
 * store (a recrawl) starts from zero, a resumed crawl goes on counting.
 */
export interface TrapTally {
  crawl: string;
  host: string;
  /** new URLs queued for the host */
  urls: number;
  /** pattern hash -> [new URLs queued, pages fingerprinted, of which near-duplicates] */
  patterns: Record<string, PatternTally>;
}
export type PatternTally = [urls: number, pages: number, nearDuplicates: number];

export const TALLY_PREFIX = '_b.';
export const tallyKey = (host: string) => `${TALLY_PREFIX}${host}`;

/**
 * Patterns remembered per host. A site has a few dozen; a host that makes up a new pattern
 * per URL (random words in paths) is held by the host budget instead. When full, the
 * pattern with the fewest URLs goes: a trap's pattern, having many, stays.
 */
export const MAX_PATTERNS_PER_HOST = 200;

/** 48 bits of SHA-256: patterns of one host never collide in practice. */
export const patternKey = (pattern: string) => hash('sha256', pattern, 'hex').slice(0, 12);

export type TrapDefence = 'trap_host_budget' | 'trap_pattern_budget' | 'trap_low_novelty';
/**
 * `checkBeforeFetch`: admitted while its pattern is past its budget or has had near-duplicate
 * pages, so the gate asks {@link judgeQueued} again before fetching it.
 */
export type TrapVerdict = { admit: true; checkBeforeFetch?: true } | { admit: false; defence: TrapDefence; detail: string };

/** A new URL as the trap defences see it. */
export interface NewUrl {
  /** its URL pattern (url-pattern.ts) */
  pattern: string;
  /**
   * found on a page of the same pattern: a calendar day linking the next day, a listing page
   * the next page, a product a related product; not so for a URL found on a page of another
   * pattern (a category page, the home page), in a sitemap, or given as a seed
   */
  fromOwnPattern: boolean;
}

export interface TrapLimits {
  /** 0 = no limit */
  maxPagesPerHost: number;
  /** 0 = no limit */
  maxUrlsPerPattern: number;
  /** a pattern is judged on novelty once it has this many pages; 0 = off */
  noveltyMinPages: number;
  /** ... and cut off when at least this share of them were near-duplicates */
  noveltyDuplicateShare: number;
}

export const trapLimitsOf = (s: CrawlSettings): TrapLimits => ({
  maxPagesPerHost: s.maxPagesPerHost,
  maxUrlsPerPattern: s.maxUrlsPerPattern,
  noveltyMinPages: s.noveltyMinPages,
  noveltyDuplicateShare: s.noveltyDuplicateShare,
});

export const trapDefencesOn = (l: TrapLimits) => l.maxPagesPerHost > 0 || l.maxUrlsPerPattern > 0 || l.noveltyMinPages > 0;

/** Whose tally: the crawl and the host. */
export interface TallyOwner {
  crawl: string;
  host: string;
}

/** The owner's tally: the stored one if it is this crawl's, else a fresh one. */
const tallyFor = (current: TrapTally | null, owner: TallyOwner): TrapTally =>
  current && current.crawl === owner.crawl ? current : { crawl: owner.crawl, host: owner.host, urls: 0, patterns: {} };

/**
 * Makes room for `key` in `patterns`, in place: when full, the pattern with the fewest URLs
 * (then pages) leaves. In place because a page's batch of links is judged against one tally:
 * copying a full table of patterns for every URL cost more than the rest of the judgement.
 */
function makeRoomFor(patterns: Record<string, PatternTally>, key: string): void {
  if (key in patterns) return;
  const keys = Object.keys(patterns);
  if (keys.length < MAX_PATTERNS_PER_HOST) return;
  let smallest = keys[0]!;
  for (const k of keys) {
    const [u, p] = patterns[k]!;
    const [su, sp] = patterns[smallest]!;
    if (u < su || (u === su && p < sp)) smallest = k;
  }
  delete patterns[smallest];
}

/** A copy of the owner's tally that {@link judgeNewUrl} and {@link makeRoomFor} may change. */
const draftOf = (current: TrapTally | null, owner: TallyOwner): TrapTally => {
  const tally = tallyFor(current, owner);
  return { ...tally, patterns: { ...tally.patterns } };
};

const lowNovelty = ([, pages, dups]: PatternTally, l: TrapLimits) => l.noveltyMinPages > 0 && pages >= l.noveltyMinPages && dups >= l.noveltyDuplicateShare * pages;
const lowNoveltyDetail = (pattern: string, [, pages, dups]: PatternTally) => `pattern ${pattern}: ${dups} of its ${pages} pages were near-duplicates`;

/**
 * Pure decision for a new URL of `host`: drop it (which defence, and why), or admit it and
 * count it (the new tally). A dropped URL is not counted. In order: the host's budget; a
 * pattern whose pages were mostly near-duplicates; past the pattern's budget, a URL its own
 * pattern's pages led to (or any, with content novelty off, which alone can tell a pattern
 * of new pages from a trap's).
 */
export function decideNewUrl(current: TrapTally | null, owner: TallyOwner, url: NewUrl, limits: TrapLimits): { next?: TrapTally; verdict: TrapVerdict } {
  const draft = draftOf(current, owner);
  const verdict = judgeNewUrl(draft, owner.host, url, limits);
  return verdict.admit ? { next: draft, verdict } : { verdict };
}

/** {@link decideNewUrl} on a draft tally: an admitted URL is counted in it. */
function judgeNewUrl(tally: TrapTally, host: string, url: NewUrl, limits: TrapLimits): TrapVerdict {
  const { pattern } = url;
  const key = patternKey(pattern);
  const counts = tally.patterns[key] ?? [0, 0, 0];
  const [urls, pages, dups] = counts;
  if (limits.maxPagesPerHost > 0 && tally.urls >= limits.maxPagesPerHost) {
    return { admit: false, defence: 'trap_host_budget', detail: `host ${host} reached its budget of ${limits.maxPagesPerHost} pages` };
  }
  if (lowNovelty(counts, limits)) {
    return { admit: false, defence: 'trap_low_novelty', detail: lowNoveltyDetail(pattern, counts) };
  }
  const pastBudget = limits.maxUrlsPerPattern > 0 && urls >= limits.maxUrlsPerPattern;
  if (pastBudget && (url.fromOwnPattern || limits.noveltyMinPages === 0)) {
    return { admit: false, defence: 'trap_pattern_budget', detail: `pattern ${pattern} produced ${urls} URLs` };
  }
  makeRoomFor(tally.patterns, key);
  tally.patterns[key] = [urls + 1, pages, dups];
  tally.urls += 1;
  const check = limits.noveltyMinPages > 0 && (pastBudget || dups > 0);
  return check ? { admit: true, checkBeforeFetch: true } : { admit: true };
}

/**
 * Judges new URLs of one host (one, or a page's batch), in order as if one after the other,
 * and counts those admitted: one compare-and-set on the host's tally.
 */
export async function countNewUrls(store: KvStore, owner: TallyOwner, urls: readonly NewUrl[], limits: TrapLimits): Promise<TrapVerdict[]> {
  return casUpdate<TrapTally, TrapVerdict[]>(store, tallyKey(owner.host), (current) => {
    // one copy a try (a compare-and-set that lost runs this again on the newer tally)
    const draft = draftOf(current, owner);
    const verdicts = urls.map((url) => judgeNewUrl(draft, owner.host, url, limits));
    return { value: verdicts.some((v) => v.admit) ? draft : undefined, result: verdicts };
  });
}

/** Pure: the tally after simhash saw one more page of `pattern`. */
export function addPage(current: TrapTally | null, owner: TallyOwner, pattern: string, nearDuplicate: boolean): TrapTally {
  const tally = draftOf(current, owner);
  const key = patternKey(pattern);
  const [urls, pages, dups] = tally.patterns[key] ?? [0, 0, 0];
  makeRoomFor(tally.patterns, key);
  tally.patterns[key] = [urls, pages + 1, dups + (nearDuplicate ? 1 : 0)];
  return tally;
}

/** Simhash's feedback: one more page of `pattern`, a near-duplicate or not. */
export async function notePage(store: KvStore, owner: TallyOwner, pattern: string, nearDuplicate: boolean): Promise<void> {
  await casUpdate<TrapTally, void>(store, tallyKey(owner.host), (current) => ({ value: addPage(current, owner, pattern, nearDuplicate), result: undefined }));
}

/**
 * Pure: whether a queued URL that its intake marked `checkBeforeFetch` is still to be fetched,
 * judged on what its pattern's pages have shown since: dropped as `trap_low_novelty` once
 * they are mostly near-duplicates. A pattern whose novelty is not known yet (too few of its
 * pages compared) is given the benefit of the doubt: a shop's listing pages name a thousand
 * products before the first of them is fetched.
 */
export function judgeQueued(current: TrapTally | null, owner: TallyOwner, pattern: string, limits: TrapLimits): TrapVerdict {
  const tally = tallyFor(current, owner);
  const counts = tally.patterns[patternKey(pattern)] ?? [0, 0, 0];
  if (lowNovelty(counts, limits)) return { admit: false, defence: 'trap_low_novelty', detail: lowNoveltyDetail(pattern, counts) };
  return { admit: true };
}

/**
 * {@link judgeQueued} on the host's tally as the bucket's leader has it: a drop ends the URL,
 * so it is never decided on a replica that lags (and one more page of the pattern, seen by
 * another process meanwhile, only makes the verdict more exact).
 */
export async function checkQueued(store: KvStore, owner: TallyOwner, pattern: string, limits: TrapLimits): Promise<TrapVerdict> {
  const entry = await readingFromLeader(store).get(tallyKey(owner.host));
  return judgeQueued(entry ? parseJsonValue<TrapTally>(entry.value) : null, owner, pattern, limits);
}
