import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { StreamNotFoundError, type StreamAdmin, type StreamMessage, type StreamState } from '../../ports/stream-admin.js';
import { readConsumerLag } from './consumer-lag.js';
import { streamAccess } from './stream-access.js';
import { jetstreamApi } from './jetstream-api.js';

/** How long the server keeps a counting consumer whose process died before deleting it. */
const COUNTING_CONSUMER_IDLE_NS = 10_000 * 1_000_000;

/** The admin port on JetStream's management API; messages are deleted as the stream port deletes them. */
export function streamAdmin(nc: NatsConnection): StreamAdmin {
  const api = jetstreamApi(nc);
  const notFound = (stream: string) => (err: unknown): never => {
    if ((err as Error).name === 'StreamNotFoundError' || /stream not found/i.test((err as Error).message)) {
      throw new StreamNotFoundError(`no stream ${stream}`, { cause: err });
    }
    throw err;
  };
  return {
    async streamState(stream: string): Promise<StreamState> {
      const info = await (await api()).streams.info(stream).catch(notFound(stream));
      return {
        stream: info.config.name,
        messages: info.state.messages,
        bytes: info.state.bytes,
        firstSeq: info.state.first_seq,
        lastSeq: info.state.last_seq,
        maxAgeMs: info.config.max_age / 1_000_000,
        maxBytes: info.config.max_bytes,
      };
    },
    async subjectCounts(stream: string, filter: string): Promise<Record<string, number>> {
      const info = await (await api()).streams.info(stream, { subjects_filter: filter }).catch(notFound(stream));
      return { ...(info.state.subjects ?? {}) };
    },
    async consumerLag(consumers) {
      return readConsumerLag(await api(), consumers, false);
    },
    async countFrom(stream: string, subject: string, fromSeq: number): Promise<number> {
      // what a consumer starting there would have pending: a short-lived one in memory, deleted at once
      const m = await api();
      const info = await m.consumers.add(stream, {
        filter_subject: subject,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: Math.max(1, fromSeq),
        ack_policy: AckPolicy.None,
        mem_storage: true,
        inactive_threshold: COUNTING_CONSUMER_IDLE_NS,
      });
      await m.consumers.delete(stream, info.name).catch(() => undefined);
      return info.num_pending;
    },
    async lastSeq(stream: string, subject: string): Promise<number | null> {
      const last = await (await api()).streams.getMessage(stream, { last_by_subj: subject }).catch(() => null);
      return last ? last.seq : null;
    },
    async readFrom(stream: string, filter: string, fromSeq: number): Promise<StreamMessage | null> {
      const m = await (await api()).direct.getMessage(stream, { seq: Math.max(1, fromSeq), next_by_subj: filter });
      if (!m) return null;
      return { seq: m.seq, subject: m.subject, data: m.data, time: m.time, msgId: m.header?.get('Nats-Msg-Id') || null };
    },
    async purgeSubject(stream: string, subject: string, throughSeq: number): Promise<void> {
      // purge's seq keeps that sequence and what follows
      await (await api()).streams.purge(stream, { filter: subject, seq: throughSeq + 1 });
    },
    deleteMessage: streamAccess(nc).deleteMessage,
  };
}
