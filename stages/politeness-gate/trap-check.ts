import type { AdmittedUrl } from '../../schemas/index.js';
import type { Emit, StageContext } from '../../pipeline/stage.js';
import { checkQueued, countNewUrls, trapDefencesOn, trapLimitsOf, type NewUrl, type TrapVerdict } from '../shared/traps/trap-tally.js';
import { urlPattern } from '../shared/traps/url-pattern.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit, urlOutcome } from '../shared/messages/outcome-emit.js';
import { crawlIdOf, jobFieldsOf } from '../shared/jobs/job-fields.js';

/**
 * The crawl-trap defences of the gate's intake: everything reaching it is a URL new to the
 * crawl (the seen-filter drops repeats), so this is where new URLs are counted per host and
 * per URL pattern, and where a host over its budget, a pattern whose pages were mostly
 * near-duplicates, or a pattern over its budget whose own pages lead to more of it, stops
 * being expanded (trap-tally.ts says why a pattern over its budget is still followed from
 * other pages, and {@link checkBeforeFetch} what becomes of such a URL).
 *
 * Counted at most once: only on a message's first delivery. A redelivery (the first one died
 * or failed somewhere between counting and acking) is queued without being judged again:
 * counting it again would count it twice, and a verdict that changed since (the budget filled
 * up meanwhile) could drop a URL the first delivery had already queued, giving it two
 * outcomes. A budget can therefore be passed by one message's URLs per such failure, never by more.
 * Retries of a fetch come back through the intake too (attempt > 0): they were counted
 * when they were new.
 */
export async function judgeNewUrls(urls: readonly AdmittedUrl[], deliveryCount: number, ctx: StageContext): Promise<TrapVerdict[]> {
  const limits = trapLimitsOf(ctx.settings);
  const verdicts: TrapVerdict[] = urls.map(() => ({ admit: true }));
  if (!trapDefencesOn(limits) || deliveryCount > 1) return verdicts;
  // a retry and a revisit were counted when they were new; the rest are counted per host,
  // in the order they came, with one write to the host's tally
  const byOwner = new Map<string, { owner: { crawl: string; host: string }; at: number[]; news: NewUrl[] }>();
  // a batch is one page's links: its pattern is worked out once
  const sourcePatterns = new Map<string, string>();
  const sourcePattern = (source: string) => sourcePatterns.get(source) ?? sourcePatterns.set(source, urlPattern(source)).get(source)!;
  urls.forEach((m, i) => {
    if ((m.attempt ?? 0) > 0 || m.via === 'revisit') return;
    const owner = { crawl: crawlIdOf(ctx, m), host: m.host };
    const key = `${owner.crawl} ${owner.host}`;
    const group = byOwner.get(key) ?? { owner, at: [], news: [] };
    byOwner.set(key, group);
    group.at.push(i);
    const pattern = urlPattern(m.url);
    group.news.push({ pattern, fromOwnPattern: m.source_url !== null && sourcePattern(m.source_url) === pattern });
  });
  await Promise.all(
    [...byOwner.values()].map(async ({ owner, at, news }) => {
      const judged = await countNewUrls(ctx.kv.traps, owner, news, limits);
      at.forEach((i, k) => (verdicts[i] = judged[k]!));
    }),
  );
  return verdicts;
}

/**
 * A queued URL its intake marked `novelty_check`, looked at again when its turn to be fetched
 * comes: dropped (the verdict says why) if its pattern's pages have turned out mostly
 * near-duplicates meanwhile. One read of the host's tally, for such URLs only.
 */
export async function checkBeforeFetch(m: AdmittedUrl, ctx: StageContext): Promise<TrapVerdict> {
  if (!m.novelty_check) return { admit: true };
  return checkQueued(ctx.kv.traps, { crawl: crawlIdOf(ctx, m), host: m.host }, urlPattern(m.url), trapLimitsOf(ctx.settings));
}

/** The fetch_log row of a URL a trap defence dropped: outcome `filtered`, reason `<defence>: <why>`. */
export function trapOutcome(ctx: StageContext, m: AdmittedUrl, verdict: Extract<TrapVerdict, { admit: false }>): Emit {
  ctx.metrics.count('politeness-gate', 'urls', verdict.defence);
  return outcomeEmit(
    ctx,
    `trap:${m.fetch_id}`,
    urlOutcome(m, { event_id: stableId('trap', m.fetch_id), outcome: 'filtered', reason: `${verdict.defence}: ${verdict.detail}`, fetch_time: ctx.clock.now() }),
  );
}
