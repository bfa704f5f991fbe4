import { encodeAdmitted, type AdmittedUrl } from '../../schemas/index.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import { emit, type Outcome, type StageContext, type StageInput } from '../../pipeline/stage.js';
import { noteQueued } from '../shared/host-state/host-slot.js';
import { judgeNewUrl, trapOutcome } from './trap-check.js';

/**
 * The gate's intake: an admitted URL joins the queue of its host (a subject of its own in
 * the host-queue stream) and the host's slot learns its queue grew. The frontier message
 * is then acked at once: URLs waiting for a host wait in that host's queue, never as
 * unacked messages, so a host with a huge backlog cannot fill the consumer's window and
 * hold the other hosts up, and nothing is redelivered while it waits.
 * A URL that a crawl-trap defence stops (trap-check.ts) is not queued: it ends as `filtered`.
 */
export async function handleGateIntake(input: StageInput<AdmittedUrl>, ctx: StageContext): Promise<Outcome> {
  const m = input.message;
  const verdict = await judgeNewUrl(input, ctx);
  if (!verdict.admit) return emit(trapOutcome(ctx, m, verdict));
  // redelivered before it was acked: the same msgId, so the server keeps one copy (and says which)
  const seq = await ctx.streams.publish(hostQueueSubject(m.host, ctx.settings.partitions), encodeAdmitted(m), `hostq:${input.streamSeq}`);
  await noteQueued(ctx.kv.hosts, m.host, seq);
  ctx.metrics.count('politeness-gate', 'urls', 'queued');
  return emit();
}
