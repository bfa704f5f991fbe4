import type { AdmittedUrl } from '../../schemas/index.js';
import type { Emit, StageContext } from '../../pipeline/stage.js';
import { countNewUrl, trapDefencesOn, trapLimitsOf, type TrapVerdict } from '../shared/traps/trap-tally.js';
import { urlPattern } from '../shared/traps/url-pattern.js';
import { stableId } from '../shared/messages/stage-ids.js';
import { outcomeEmit } from '../shared/messages/outcome-emit.js';
import { crawlIdOf, jobFieldsOf } from '../shared/job-fields.js';

/**
 * The crawl-trap defences of the gate's intake: everything reaching it is a URL new to the
 * crawl (the seen-filter drops repeats), so this is where new URLs are counted per host and
 * per URL pattern, and where a host or pattern over its budget, or a pattern whose pages
 * were mostly near-duplicates, stops being expanded.
 *
 * Counted at most once: only on a message's first delivery. A redelivery (the first one died
 * or failed somewhere between counting and acking) is queued without being judged again:
 * counting it again would count it twice, and a verdict that changed since (the budget filled
 * up meanwhile) could drop a URL the first delivery had already queued, giving it two
 * outcomes. A budget can therefore be passed by one URL per such failure, never by more.
 * Retries of a fetch come back through the intake too (attempt > 0): they were counted
 * when they were new.
 */
export async function judgeNewUrl(m: AdmittedUrl, deliveryCount: number, ctx: StageContext): Promise<TrapVerdict> {
  const limits = trapLimitsOf(ctx.settings);
  // a revisit was counted when it was new
  if (!trapDefencesOn(limits) || (m.attempt ?? 0) > 0 || m.via === 'revisit' || deliveryCount > 1) return { admit: true };
  return countNewUrl(ctx.kv.traps, { crawl: crawlIdOf(ctx, m), host: m.host }, urlPattern(m.url), limits);
}

/** The fetch_log row of a URL a trap defence dropped: outcome `filtered`, reason `<defence>: <why>`. */
export function trapOutcome(ctx: StageContext, m: AdmittedUrl, verdict: Extract<TrapVerdict, { admit: false }>): Emit {
  ctx.metrics.count('politeness-gate', 'urls', verdict.defence);
  return outcomeEmit(ctx, `trap:${m.fetch_id}`, {
    ...jobFieldsOf(m),
    event_id: stableId('trap', m.fetch_id),
    fetch_id: m.fetch_id,
    url: m.url,
    host: m.host,
    outcome: 'filtered',
    reason: `${verdict.defence}: ${verdict.detail}`,
    fetch_status: null,
    fetch_time: ctx.clock.now(),
    duration_ms: null,
    depth: m.depth,
  });
}
