import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** Which retained messages of a stream to read: a start (sequence or time) and an end (sequence or time), all optional. */
export interface StreamRange {
  fromSeq?: number;
  since?: Date;
  untilSeq?: number;
  until?: Date;
}

export interface RetainedMessage {
  subject: string;
  data: Uint8Array;
  seq: number;
  /** when the server stored it */
  time: Date;
}

export interface StreamWindow {
  /** the stream's first and last sequence when the read started */
  firstSeq: number;
  lastSeq: number;
}

/**
 * Reads the retained messages of `stream` in `range`, in order, through an ordered
 * consumer: an ephemeral consumer the server forgets afterwards, so no durable consumer of
 * the live crawl is touched and nothing is acked. The read ends at the stream's last
 * message as of the start (a running crawl that keeps appending does not make it endless).
 */
export async function* readStreamRange(nc: NatsConnection, stream: string, range: StreamRange, onWindow?: (w: StreamWindow) => void): AsyncGenerator<RetainedMessage> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  const window = { firstSeq: info.state.first_seq, lastSeq: info.state.last_seq };
  onWindow?.(window);
  const endSeq = Math.min(window.lastSeq, range.untilSeq ?? Number.MAX_SAFE_INTEGER);
  if (info.state.messages === 0 || endSeq < Math.max(window.firstSeq, range.fromSeq ?? 0)) return;
  const start =
    range.fromSeq !== undefined
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, range.fromSeq) }
      : range.since
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: range.since.toISOString() }
        : { deliver_policy: DeliverPolicy.All };
  const consumer = await jetstream(nc).consumers.get(stream, start);
  // a start after the newest message: nothing to read (consume would wait for new ones)
  if ((await consumer.info()).num_pending === 0) {
    await consumer.delete().catch(() => undefined);
    return;
  }
  const messages = await consumer.consume({ max_messages: 64 });
  try {
    for await (const m of messages) {
      if (m.seq > endSeq || (range.until && m.time > range.until)) break;
      yield { subject: m.subject, data: m.data, seq: m.seq, time: m.time };
      // pending: what the consumer has not delivered yet; 0 = this was the newest message
      if (m.seq >= endSeq || m.info.pending === 0) break;
    }
  } finally {
    messages.stop();
    await consumer.delete().catch(() => undefined);
  }
}
