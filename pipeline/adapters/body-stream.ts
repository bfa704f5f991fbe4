import { jetstream } from '@nats-io/jetstream';
import { jetstreamApi } from './jetstream-api.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { EDGES } from '../../topology/index.js';
import type { BodyStore } from '../../ports/bodies.js';
import { chunkedBodyStore, type ChunkStream } from '../body-chunks.js';

/**
 * The body store on the `CRAWL_BODIES` stream: chunks published like any output (acks
 * awaited), read back by sequence with direct gets, which any replica may answer; one that
 * has not caught up answers "not found", so that is confirmed by the stream's leader before a
 * body is taken for gone.
 */
export function natsBodyStore(nc: NatsConnection): BodyStore {
  const js = jetstream(nc);
  const name = EDGES.bodies.stream;
  const manager = jetstreamApi(nc);
  const stream: ChunkStream = {
    name,
    async publish(subject, data, msgId) {
      const ack = await js.publish(subject, data, { msgID: msgId });
      return { seq: ack.seq, duplicate: ack.duplicate };
    },
    async get(seq) {
      const m = await (await manager()).direct.getMessage(name, { seq });
      if (m) return { subject: m.subject, data: m.data };
      const confirmed = await (await manager()).streams.getMessage(name, { seq });
      return confirmed ? { subject: confirmed.subject, data: confirmed.data } : null;
    },
  };
  return chunkedBodyStore(stream, nc.info?.max_payload ?? 1024 * 1024);
}
