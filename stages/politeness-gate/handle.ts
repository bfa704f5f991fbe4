import { encodeAdmitted, type AdmittedUrl } from '../../schemas/index.js';
import { hostQueueSubject } from '../../pipeline/partition.js';
import type { Emit, Disposition, StageContext, StageInput } from '../../pipeline/stage.js';
import { laneOf, noteQueued } from '../shared/politeness/index.js';
import { judgeNewUrls, trapOutcome } from './trap-check.js';
import { domainImportanceOf } from './domain-importance.js';
import { fullSpell, HOSTQ_FULL_RETRY_MS, HOSTQ_FULL_WAIT_MS, noRoomOutcome, noteRefused, noteRoom, waitedForRoom } from './hostq-room.js';

/**
 * The gate's intake: each admitted URL of a frontier message (one, or the seen-filter's batch
 * of a page's new links, schemas/url-batches.ts) joins a queue of its host (its lane's subject
 * in the host-queue stream, host-lanes.ts: one message a URL), and before the frontier
 * message is acked each host's queue tail learns its new sequence (`beforeAck`; if that
 * write fails the message is redelivered, and the host-queue publishes are deduplicated by
 * their msgIds, so each URL is queued once). The frontier message is acked at once: URLs waiting for a host wait in that host's queue, never as
 * unacked messages, so a host with a huge backlog cannot fill the consumer's window and
 * hold the other hosts up, and nothing is redelivered while it waits.
 * A URL that a crawl-trap defence stops (trap-check.ts) is not queued: it ends as `filtered`;
 * one it wants to look at again before the fetch is queued marked `novelty_check`.
 * While the host-queue stream is at its size limit, URLs wait in the frontier (hostq-room.ts).
 */
export async function handleGateIntake(input: StageInput<AdmittedUrl[]>, ctx: StageContext): Promise<Disposition> {
  const urls = input.message;
  const spell = fullSpell(ctx);
  if (spell) {
    const waited = waitedForRoom(spell, input.publishedAt, ctx.clock.now());
    if (waited >= HOSTQ_FULL_WAIT_MS) return { kind: 'emit', messages: urls.map((m) => noRoomOutcome(ctx, m, waited)) };
    ctx.metrics.count('politeness-gate', 'urls', 'hostq_wait', urls.length);
    return { kind: 'retry', afterMs: HOSTQ_FULL_RETRY_MS, reason: 'host queues full' };
  }
  const verdicts = await judgeNewUrls(urls, input.deliveryCount, ctx);
  const queued: Emit[] = [];
  const tails: Array<{ host: string; lane: string }> = [];
  const filtered: Emit[] = [];
  urls.forEach((m, i) => {
    const verdict = verdicts[i]!;
    if (!verdict.admit) {
      filtered.push(trapOutcome(ctx, m, verdict));
      return;
    }
    const lane = laneOf(m);
    tails.push({ host: m.host, lane });
    // what the host scheduler ranks the host's domain by (importance), heard before the host's first turn
    domainImportanceOf(ctx.kv.importance).note(m.host, m.domain, m.importance);
    // redelivered before it was acked: the same msgId, so the server keeps one copy (and says
    // which); the first URL's is the one a message of one URL had before batching
    const data = encodeAdmitted(verdict.checkBeforeFetch ? { ...m, novelty_check: true } : m);
    queued.push({ subject: hostQueueSubject(m.host, ctx.settings.partitions, lane), data, msgId: i === 0 ? `hostq:${input.streamSeq}` : `hostq:${input.streamSeq}.${i}` });
  });
  if (queued.length === 0) return { kind: 'emit', messages: filtered };
  return {
    kind: 'emit',
    messages: [...queued, ...filtered],
    beforeAck: async (published) => {
      // the host-queue publishes come first in `messages`, so their acks are the first
      // `tails.length`; each host's lane gets one write, of its newest sequence
      const newest = new Map<string, { host: string; lane: string; seq: number }>();
      tails.forEach((t, i) => {
        const key = `${t.lane} ${t.host}`;
        const seq = published[i]!.seq;
        if ((newest.get(key)?.seq ?? 0) < seq) newest.set(key, { ...t, seq });
      });
      await Promise.all([...newest.values()].map((t) => noteQueued(ctx.kv.hosts, t.host, t.seq, t.lane)));
      ctx.metrics.count('politeness-gate', 'urls', 'queued', tails.length);
      noteRoom(ctx);
    },
    onPublishFailed: async (err) => noteRefused(ctx, err),
  };
}
