import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { StoredMessage, StreamAccess } from '../stage.js';

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
  };
}
