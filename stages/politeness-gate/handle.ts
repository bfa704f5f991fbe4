import { encodeAdmitted, type AdmittedUrl } from '../../schemas/index.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import type { Outcome, StageContext, StageInput } from '../../pipeline/stage.js';
import { noteQueued } from '../shared/host-state/host-slot.js';
import { judgeNewUrl, trapOutcome } from './trap-check.js';

/**
 * The gate's intake: an admitted URL joins the queue of its host (a subject of its own in
 * the host-queue stream: the one message this handler emits), and before the frontier
 * message is acked the host's queue tail learns its new sequence (`beforeAck`; if that
 * write fails the message is redelivered, and the host-queue publish is deduplicated by
 * its msgId, so the URL is queued once). The frontier message is acked at once: URLs waiting for a host wait in that host's queue, never as
 * unacked messages, so a host with a huge backlog cannot fill the consumer's window and
 * hold the other hosts up, and nothing is redelivered while it waits.
 * A URL that a crawl-trap defence stops (trap-check.ts) is not queued: it ends as `filtered`.
 */
export async function handleGateIntake(input: StageInput<AdmittedUrl>, ctx: StageContext): Promise<Outcome> {
  const m = input.message;
  const verdict = await judgeNewUrl(input, ctx);
  if (!verdict.admit) return { kind: 'emit', messages: [trapOutcome(ctx, m, verdict)] };
  return {
    kind: 'emit',
    // redelivered before it was acked: the same msgId, so the server keeps one copy (and says which)
    messages: [{ subject: hostQueueSubject(m.host, ctx.settings.partitions), data: encodeAdmitted(m), msgId: `hostq:${input.streamSeq}` }],
    beforeAck: async ([queued]) => {
      await noteQueued(ctx.kv.hosts, m.host, queued!.seq);
      ctx.metrics.count('politeness-gate', 'urls', 'queued');
    },
  };
}
