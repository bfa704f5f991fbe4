import { encodeAdmitted, type AdmittedUrl } from '../../schemas/index.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import type { Outcome, StageContext, StageInput } from '../../pipeline/stage.js';
import { noteQueued } from '../shared/host-state/host-slot.js';
import { laneOf } from '../shared/host-state/host-lanes.js';
import { judgeNewUrl, trapOutcome } from './trap-check.js';

/**
 * The gate's intake: an admitted URL joins a queue of its host (its lane's subject in the
 * host-queue stream, host-lanes.ts: the one message this handler emits), and before the frontier
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
  const lane = laneOf(m);
  return {
    kind: 'emit',
    // redelivered before it was acked: the same msgId, so the server keeps one copy (and says which)
    messages: [{ subject: hostQueueSubject(m.host, ctx.settings.partitions, lane), data: encodeAdmitted(m), msgId: `hostq:${input.streamSeq}` }],
    beforeAck: async ([queued]) => {
      await noteQueued(ctx.kv.hosts, m.host, queued!.seq, lane);
      ctx.metrics.count('politeness-gate', 'urls', 'queued');
    },
  };
}
