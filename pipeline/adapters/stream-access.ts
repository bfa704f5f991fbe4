import { DeliverPolicy, jetstream, type JetStreamClient, type JetStreamPublishOptions } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ConsumerPosition, Emit, Published, Publisher, StoredMessage, StreamAccess } from '../../ports/streams.js';
import { tooLargeForServer } from './max-payload.js';
import { jetstreamApi } from './jetstream-api.js';

/**
 * Direct stream access for stages that keep their own queues: "the next message on this
 * subject from sequence N" (a direct get with next_by_subj, served by any replica, its
 * "none" confirmed by the stream's leader), a range of one subject, a consumer's position.
 */
export function streamAccess(nc: NatsConnection): StreamAccess {
  const js = jetstream(nc);
  const manager = jetstreamApi(nc);
  return {
    async readNext(stream: string, subject: string, fromSeq: number): Promise<StoredMessage | null> {
      const query = { seq: Math.max(1, fromSeq), next_by_subj: subject };
      const m = await (await manager()).direct.getMessage(stream, query);
      if (m) return { seq: m.seq, data: m.data };
      // A direct get may be answered by a replica that has not caught up (a server that just
      // came back): "nothing there" is then stale, and a caller that takes it for retention
      // would skip queued URLs. The leader answers STREAM.MSG.GET (nats-server 2.9 takes
      // next_by_subj there too, though the client's type does not list it); a message a
      // replica does return is one the leader has, since replicas apply in order.
      const confirmed = await (await manager()).streams.getMessage(stream, query as unknown as { seq: number });
      return confirmed ? { seq: confirmed.seq, data: confirmed.data } : null;
    },
    async deleteMessage(stream: string, seq: number): Promise<boolean> {
      try {
        // not erased (overwritten on disk): the message is a URL, and erasing costs a block rewrite
        return await (await manager()).streams.deleteMessage(stream, seq, false);
      } catch (err) {
        if (/no message found/i.test((err as Error).message)) return false;
        throw err;
      }
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
      const info = await (await manager()).consumers.info(stream, durable);
      return { ackFloor: info.ack_floor.stream_seq, delivered: info.delivered.stream_seq, pending: info.num_pending };
    },
  };
}

/**
 * Publishes through JetStream, all at once, and waits for every ack (the runner's publisher).
 * A message over the server's `maxPayloadBytes` fails the publish with an error that names it.
 */
export function jetstreamPublisher(js: JetStreamClient, maxPayloadBytes = Infinity): Publisher {
  return {
    async publish(messages: readonly Emit[]): Promise<Published[]> {
      const over = messages.find((m) => m.data.length > maxPayloadBytes);
      if (over) throw tooLargeForServer(over.subject, over.data.length, maxPayloadBytes);
      const acks = await Promise.all(messages.map((m) => js.publish(m.subject, m.data, publishOptions(m))));
      return acks.map((ack, i) => ({ subject: messages[i]!.subject, seq: ack.seq, duplicate: ack.duplicate, stream: ack.stream }));
    },
  };
}

function publishOptions(m: Emit): Partial<JetStreamPublishOptions> | undefined {
  if (!m.msgId && !m.expectStream) return undefined;
  return { ...(m.msgId ? { msgID: m.msgId } : {}), ...(m.expectStream ? { expect: { streamName: m.expectStream } } : {}) };
}

/** The JetStream publisher of a connection, for commands and services that publish outside a stage. */
export function connectionPublisher(nc: NatsConnection): Publisher {
  return jetstreamPublisher(jetstream(nc));
}
