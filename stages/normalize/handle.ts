import {
  decodeDiscoveredLinks,
  decodeSeeds,
  batchesBy,
  encodeCandidates,
  type CandidateUrl,
  type DiscoveredLinks,
  type SeedMessage,
} from '../../schemas/index.js';
import { SUBJECTS } from '../../topology/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Emit, type Disposition, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { canonicalize } from './canonical-url.js';
import { checkScope, modeDecides, parsePattern } from './scope.js';
import { ScopeCache } from './scope-cache.js';
import { lookupKeys, seedScopeKeys } from './scope-keys.js';
import { RecentUrls } from './recent-urls.js';
import { pathOf, repeatedSegments } from './traps.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { JobRecordCache } from '../shared/jobs/job-records.js';
import { jobOf } from '../shared/jobs/job-fields.js';
import { JobScopes, type LinkScope } from './job-scopes.js';
import { oncePerObject } from '../shared/once-per-object.js';
import { outcomeEmit, urlOutcome } from '../shared/messages/outcome-emit.js';

export type NormalizeInput = { kind: 'seed'; seed: SeedMessage } | { kind: 'seeds'; seeds: SeedMessage[] } | { kind: 'links'; links: DiscoveredLinks };

export function decodeNormalizeInput(subject: string, data: Uint8Array): NormalizeInput {
  if (subject === SUBJECTS.seeds) {
    const seeds = decodeSeeds(data);
    return seeds.length === 1 ? { kind: 'seed', seed: seeds[0]! } : { kind: 'seeds', seeds };
  }
  return { kind: 'links', links: decodeDiscoveredLinks(data) };
}

/** Compiled include/exclude patterns (settings never change in a process). */
const patternsOf = oncePerObject((ctx: StageContext) => ({
  include: ctx.settings.include.map((p) => parsePattern(p)),
  exclude: ctx.settings.exclude.map((p) => parsePattern(p)),
}));
const scopeOf = oncePerObject((ctx: StageContext) => new ScopeCache(ctx.kv.scope));
const recentOf = oncePerObject((_ctx: StageContext) => new RecentUrls());
const jobScopesOf = oncePerObject((ctx: StageContext) => new JobScopes(new JobRecordCache(ctx.kv.jobs), scopeOf(ctx), () => ctx.clock.now()));

function filtered(ctx: StageContext, url: string, host: string, depth: number, reason: string, job?: string): Emit {
  // one fetch_log row per URL, reason and job, however often the URL is found
  const key = job === undefined ? [url, reason] : [url, reason, job];
  return outcomeEmit(
    ctx,
    `filtered:${stableId(...key)}`,
    urlOutcome({ ...(job !== undefined ? { job } : {}), url, host, depth }, { event_id: stableId('filtered', ...key), outcome: 'filtered', reason, fetch_time: ctx.clock.now() }),
  );
}

/**
 * The candidates' messages: one per partition, a batch of up to MAX_URLS_PER_BATCH
 * (schemas/url-batches.ts), since a page's new links are most of the crawl's early messages.
 * No msgId: a repeat is what the seen-filter drops.
 */
function candidateEmits(ctx: StageContext, candidates: readonly CandidateUrl[]): Emit[] {
  return batchesBy(candidates, (c) => subjectFor('normalized', c.host, ctx.settings.partitions)).map(({ key, items }) => ({
    subject: key,
    data: encodeCandidates(items),
  }));
}

/**
 * Seeds define the scope: each one's domain, host and prefix are in, whatever else is configured
 * (seedScopeKeys). All of one message's seeds are put in the scope before any of them is passed
 * on, so no link found from one of them can be judged before another's scope is known.
 */
async function handleSeeds(seeds: readonly SeedMessage[], ctx: StageContext): Promise<Disposition> {
  const out: Emit[] = [];
  const candidates: CandidateUrl[] = [];
  const keys = new Set<string>();
  for (const seed of seeds) {
    const result = canonicalize(seed.url);
    const depth = seed.depth ?? 0;
    if (!result.ok) {
      // the URL itself is in the crawl log (the filtered row), not in the process log: it may carry a secret
      ctx.log.warn({ reason: result.reason }, 'seed rejected');
      out.push(filtered(ctx, seed.url, '', depth, `${result.reason}: ${result.detail}`));
      continue;
    }
    for (const k of seedScopeKeys(result)) keys.add(k);
    candidates.push({ v: 1, url: result.url, host: result.host, domain: result.registrableDomain, depth, source_url: null, via: 'seed' });
  }
  await scopeOf(ctx).addAll([...keys]);
  return emit(...candidateEmits(ctx, candidates), ...out);
}

/** The scope rules links are judged by: their job's, or the deployment's crawl's. */
async function scopeFor(msg: DiscoveredLinks, ctx: StageContext): Promise<LinkScope | { stopped: string }> {
  if (msg.job === undefined) {
    const { include, exclude } = patternsOf(ctx);
    const scope = scopeOf(ctx);
    const mode = ctx.settings.scope;
    return {
      rules: { mode, include, exclude, maxDepth: ctx.settings.maxDepth },
      inScope: (u) => mode === 'open' || scope.hasAny(lookupKeys(mode, u), ctx.clock.now()),
      widen: (u) => scope.addAll(seedScopeKeys(u)),
    };
  }
  return jobScopesOf(ctx).scopeOf(msg.job, ctx.clock.now());
}

async function handleLinks(msg: DiscoveredLinks, ctx: StageContext): Promise<Disposition> {
  const out: Emit[] = [];
  const candidates: CandidateUrl[] = [];
  const rules = await scopeFor(msg, ctx);
  const seen = new Set<string>();
  const recent = recentOf(ctx);
  const forwarded: string[] = [];
  // a revisit, or a URL of a sitemap, goes on whether seen or not: the seen filter knows what to do
  const repeatable = msg.via === 'revisit';
  for (const link of msg.links) {
    const result = canonicalize(link.url);
    if (!result.ok) {
      out.push(filtered(ctx, link.url, '', msg.depth, `${result.reason}: ${result.detail}`, msg.job));
      continue;
    }
    if ('stopped' in rules) {
      out.push(filtered(ctx, result.url, result.host, msg.depth, rules.stopped, msg.job));
      continue;
    }
    if (seen.has(result.url)) continue;
    seen.add(result.url);
    // already forwarded by this process: the seen-filter has it and would drop it as seen
    const recentKey = msg.job === undefined ? result.url : `${msg.job} ${result.url}`;
    if (!repeatable && recent.has(recentKey)) continue;
    // a seed's redirect target is in the seed's scope, wherever it moved to
    if (msg.from_seed && msg.via === 'redirect') await rules.widen(result);
    const inMode = modeDecides(result.url, rules.rules) ? await rules.inScope(result) : true;
    const verdict = checkScope(result, msg.depth, rules.rules, inMode);
    if (!verdict.ok) {
      out.push(filtered(ctx, result.url, result.host, msg.depth, `${verdict.reason}: ${verdict.detail}`, msg.job));
      continue;
    }
    const trap = repeatedSegments(pathOf(result.url));
    if (trap) {
      out.push(filtered(ctx, result.url, result.host, msg.depth, `trap_repeated_segments: ${trap}`, msg.job));
      continue;
    }
    if (!repeatable) forwarded.push(recentKey);
    candidates.push({
      v: 1,
      url: result.url,
      host: result.host,
      domain: result.registrableDomain,
      depth: msg.depth,
      source_url: msg.source_url,
      via: msg.via,
      ...(msg.redirect_chain ? { redirect_chain: msg.redirect_chain } : {}),
      ...(msg.from_seed ? { from_seed: true as const } : {}),
      ...jobOf(msg),
      ...(link.revisit ? { revisit: link.revisit } : {}),
      ...(link.hint_interval_ms ? { hint_interval_ms: link.hint_interval_ms } : {}),
      ...(link.fetch_as ? { fetch_as: link.fetch_as } : {}),
      ...(link.priority ? { priority: link.priority } : {}),
      ...(msg.sitemap_level !== undefined ? { sitemap_level: msg.sitemap_level } : {}),
    });
  }
  ctx.metrics.count('normalize', 'urls', 'candidate', out.length + candidates.length);
  out.unshift(...candidateEmits(ctx, candidates));
  // remembered once they are in the stream: if publishing fails, the redelivered message must
  // forward them again, not skip them as already on their way
  return { kind: 'emit', messages: out, afterPublish: async () => forwarded.forEach((k) => recent.add(k)) };
}

export async function handleNormalize(input: StageInput<NormalizeInput>, ctx: StageContext): Promise<Disposition> {
  const m = input.message;
  if (m.kind === 'links') return handleLinks(m.links, ctx);
  return handleSeeds(m.kind === 'seed' ? [m.seed] : m.seeds, ctx);
}
