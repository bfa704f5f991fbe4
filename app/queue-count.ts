import { AckPolicy, DeliverPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { EDGES } from '../topology/index.js';

/**
 * Messages on a host-queue subject from `fromSeq` on (the queues hold stream sequences, not
 * counts): what a consumer starting there would have pending. A short-lived consumer in
 * memory, deleted at once (and by the server after 10 s if this process dies first).
 */
export async function countFrom(jsm: JetStreamManager, subject: string, fromSeq: number): Promise<number> {
  const info = await jsm.consumers.add(EDGES.hostq.stream, {
    filter_subject: subject,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: Math.max(1, fromSeq),
    ack_policy: AckPolicy.None,
    mem_storage: true,
    inactive_threshold: 10_000 * 1_000_000, // ns: the server removes it if this process dies first
  });
  await jsm.consumers.delete(EDGES.hostq.stream, info.name).catch(() => undefined);
  return info.num_pending;
}
