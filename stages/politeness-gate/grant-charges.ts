import type { AdmittedUrl } from '../../schemas/index.js';
import type { StageContext } from '../../pipeline/stage.js';
import { casUpdate } from '../../pipeline/kv-store.js';
import { crawlIdOf } from '../shared/jobs/job-fields.js';
import { oncePerObject } from '../shared/once-per-object.js';
import { KnownSet } from '../shared/breadth/known-set.js';
import { admittedCountKey } from '../shared/breadth/page-budget.js';

/**
 * What a grant counts against, besides its host's slot:
 * - `--max-pages-per-domain N`: requests granted per registrable domain, a counter per domain
 *   and crawl in the traps bucket (`_dg.<crawl>.<domain>`), global across gates. The N+1st URL
 *   of a domain ends `filtered` with reason `max_pages_per_domain`; once a gate has seen a
 *   domain full it remembers so (bounded), and its later URLs end without a KV read.
 * - a URL the first pass held (stages/shared/breadth/first-pass.ts) was not counted against
 *   --max-pages when admitted: it is counted now, and past the limit ends as `max_pages`.
 * Each is a compare-and-set made only when the grant is going out (the host's slot taken), so
 * a URL that waits is never counted twice; `undo` gives it back if the grant is not sent.
 */
const grantsKey = (crawl: string, domain: string) => `_dg.${crawl}.${domain}`;
const fullDomainsOf = oncePerObject((_ctx: StageContext) => new KnownSet(10_000));

export type Charge = { ok: true; undo: () => Promise<void> } | { ok: false; reason: string };

/** The reason a URL ends without a request, known to this gate already (its domain is full). */
export function knownRefusal(ctx: StageContext, m: Pick<AdmittedUrl, 'domain' | 'job'>): string | null {
  const limit = ctx.settings.maxPagesPerDomain;
  return limit > 0 && fullDomainsOf(ctx).has(`${crawlIdOf(ctx, m)} ${m.domain}`) ? domainFullReason(limit, m.domain) : null;
}

const domainFullReason = (limit: number, domain: string) => `max_pages_per_domain: ${limit} requests to ${domain} granted`;

export async function chargeGrant(ctx: StageContext, m: AdmittedUrl): Promise<Charge> {
  const undos: Array<() => Promise<void>> = [];
  const crawl = crawlIdOf(ctx, m);
  const perDomain = ctx.settings.maxPagesPerDomain;
  if (perDomain > 0) {
    const key = grantsKey(crawl, m.domain);
    const taken = await casUpdate<number, boolean>(ctx.kv.traps, key, (n) => ((n ?? 0) >= perDomain ? { result: false } : { value: (n ?? 0) + 1, result: true }));
    if (!taken) {
      fullDomainsOf(ctx).add(`${crawl} ${m.domain}`);
      return { ok: false, reason: domainFullReason(perDomain, m.domain) };
    }
    undos.push(() => casUpdate<number, void>(ctx.kv.traps, key, (n) => ({ value: Math.max(0, (n ?? 0) - 1), result: undefined })));
  }
  const maxPages = ctx.settings.maxPages;
  if (m.held && maxPages > 0) {
    const key = admittedCountKey(crawl);
    const counted = await casUpdate<number, boolean>(ctx.kv.seen, key, (n) => ((n ?? 0) >= maxPages ? { result: false } : { value: (n ?? 0) + 1, result: true }));
    if (!counted) {
      await Promise.all(undos.map((undo) => undo()));
      return { ok: false, reason: `max_pages: the crawl's limit of ${maxPages} pages is reached` };
    }
    undos.push(() => casUpdate<number, void>(ctx.kv.seen, key, (n) => ({ value: Math.max(0, (n ?? 0) - 1), result: undefined })));
  }
  return { ok: true, undo: async () => void (await Promise.all(undos.map((undo) => undo()))) };
}
