import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ConsumerPosition, StoredMessage, StreamAccess } from '../../ports/streams.js';

/**
 * Direct stream access for stages that keep their own queues: publish returning the
 * stream sequence, and "the next message on this subject from sequence N" (a direct get
 * with next_by_subj, served by any replica; nats-server 2.9 has it).
 */
export function streamAccess(nc: NatsConnection): StreamAccess {
  const js = jetstream(nc);
  let jsm: Promise<JetStreamManager> | undefined;
  return {
    async publish(subject: string, data: Uint8Array, msgId?: string): Promise<number> {
      const ack = await js.publish(subject, data, msgId ? { msgID: msgId } : undefined);
      return ack.seq;
    },
    async readNext(stream: string, subject: string, fromSeq: number): Promise<StoredMessage | null> {
      jsm ??= jetstreamManager(nc);
      const m = await (await jsm).direct.getMessage(stream, { seq: Math.max(1, fromSeq), next_by_subj: subject });
      return m ? { seq: m.seq, data: m.data } : null;
    },
    async *replay(stream: string, subject: string, fromSeq: number, toSeq: number): AsyncIterable<StoredMessage> {
      if (toSeq < fromSeq) return;
      const consumer = await js.consumers.get(stream, {
        filter_subjects: subject,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: Math.max(1, fromSeq),
      });
      // pending on this subject from fromSeq: an empty range ends at once instead of waiting for messages
      const info = await consumer.info(true);
      if (info.num_pending === 0) return;
      const messages = await consumer.consume({ max_messages: 1024 });
      try {
        for await (const m of messages) {
          if (m.seq > toSeq) break;
          yield { seq: m.seq, data: m.data };
          if (m.seq === toSeq || m.info.pending === 0) break;
        }
      } finally {
        messages.stop();
        await consumer.delete().catch(() => undefined);
      }
    },
    async consumerPosition(stream: string, durable: string): Promise<ConsumerPosition> {
      jsm ??= jetstreamManager(nc);
      const info = await (await jsm).consumers.info(stream, durable);
      return { ackFloor: info.ack_floor.stream_seq, delivered: info.delivered.stream_seq };
    },
  };
}
