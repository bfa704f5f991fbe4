import {
  decodeDiscoveredLinks,
  decodeSeed,
  encodeCandidate,
  type CandidateUrl,
  type DiscoveredLinks,
  type SeedMessage,
} from '../../schemas/index.js';
import { SUBJECTS } from '../../ops/nats/edges.js';
import { subjectFor } from '../../pipeline/partition.js';
import { emit, type Emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { canonicalize } from './canonical-url.js';
import { checkScope, parsePattern } from './scope.js';
import { ScopeCache } from './scope-cache.js';
import { RecentUrls } from './recent-urls.js';
import { pathOf, repeatedSegments } from './traps.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { perKey } from '../shared/per-key.js';
import { outcomeEmit } from '../shared/messages/outcome-emit.js';

export type NormalizeInput = { kind: 'seed'; seed: SeedMessage } | { kind: 'links'; links: DiscoveredLinks };

export function decodeNormalizeInput(subject: string, data: Uint8Array): NormalizeInput {
  if (subject === SUBJECTS.seeds) return { kind: 'seed', seed: decodeSeed(data) };
  return { kind: 'links', links: decodeDiscoveredLinks(data) };
}

/** Compiled include/exclude patterns (settings never change in a process). */
const patternsOf = perKey((ctx: StageContext) => ({
  include: ctx.settings.include.map((p) => parsePattern(p)),
  exclude: ctx.settings.exclude.map((p) => parsePattern(p)),
}));
const scopeOf = perKey((ctx: StageContext) => new ScopeCache(ctx.kv.scope));
const recentOf = perKey((_ctx: StageContext) => new RecentUrls());

function filtered(ctx: StageContext, url: string, host: string, depth: number, reason: string): Emit {
  // one fetch_log row per URL and reason, however often the URL is found
  return outcomeEmit(ctx, `filtered:${stableId(url, reason)}`, {
    event_id: stableId('filtered', url, reason),
    fetch_id: null,
    url,
    host,
    outcome: 'filtered',
    reason,
    fetch_status: null,
    fetch_time: ctx.clock.now(),
    duration_ms: null,
    depth,
  });
}

function candidate(ctx: StageContext, c: CandidateUrl): Emit {
  return { subject: subjectFor('normalized', c.host, ctx.settings.partitions), data: encodeCandidate(c) };
}

async function handleSeed(seed: SeedMessage, ctx: StageContext): Promise<Outcome> {
  const result = canonicalize(seed.url);
  const depth = seed.depth ?? 0;
  if (!result.ok) {
    ctx.log.warn({ url: seed.url, reason: result.reason }, `seed rejected: ${result.detail}`);
    return emit(filtered(ctx, seed.url, '', depth, `${result.reason}: ${result.detail}`));
  }
  // a seed defines the scope: its registrable domain is in, whatever else is configured
  await scopeOf(ctx).add(result.registrableDomain);
  return emit(
    candidate(ctx, { v: 1, url: result.url, host: result.host, domain: result.registrableDomain, depth, source_url: null, via: 'seed' }),
  );
}

async function handleLinks(msg: DiscoveredLinks, ctx: StageContext): Promise<Outcome> {
  const out: Emit[] = [];
  const { include, exclude } = patternsOf(ctx);
  const scope = scopeOf(ctx);
  const seen = new Set<string>();
  const recent = recentOf(ctx);
  for (const link of msg.links) {
    const result = canonicalize(link.url);
    if (!result.ok) {
      out.push(filtered(ctx, link.url, '', msg.depth, `${result.reason}: ${result.detail}`));
      continue;
    }
    if (seen.has(result.url)) continue;
    seen.add(result.url);
    // already forwarded by this process: the seen-filter has it and would drop it as seen
    if (recent.has(result.url)) continue;
    const inScope = await scope.has(result.registrableDomain, ctx.clock.now());
    const verdict = checkScope(result.url, result.registrableDomain, msg.depth, {
      allowedDomains: inScope ? new Set([result.registrableDomain]) : new Set(),
      include,
      exclude,
      maxDepth: ctx.settings.maxDepth,
    });
    if (!verdict.ok) {
      out.push(filtered(ctx, result.url, result.host, msg.depth, `${verdict.reason}: ${verdict.detail}`));
      continue;
    }
    const trap = repeatedSegments(pathOf(result.url));
    if (trap) {
      out.push(filtered(ctx, result.url, result.host, msg.depth, `trap_repeated_segments: ${trap}`));
      continue;
    }
    recent.add(result.url);
    out.push(
      candidate(ctx, {
        v: 1,
        url: result.url,
        host: result.host,
        domain: result.registrableDomain,
        depth: msg.depth,
        source_url: msg.source_url,
        via: msg.via,
        ...(msg.redirect_chain ? { redirect_chain: msg.redirect_chain } : {}),
      }),
    );
  }
  ctx.metrics.count('normalize', 'urls', 'candidate', out.length);
  return emit(...out);
}

export async function handleNormalize(input: StageInput<NormalizeInput>, ctx: StageContext): Promise<Outcome> {
  const m = input.message;
  return m.kind === 'seed' ? handleSeed(m.seed, ctx) : handleLinks(m.links, ctx);
}
