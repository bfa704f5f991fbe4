import { JetStreamApiError, JetStreamError, type ApiError } from '@nats-io/jetstream';
import { createInbox, headers, NoRespondersError, TimeoutError, type Msg, type NatsConnection } from '@nats-io/transport-node';
import type { Emit, Published, Publisher } from '../../ports/streams.js';

/** How long a publish waits for its stream's acknowledgement: the JetStream client's default. */
export const PUBLISH_ACK_TIMEOUT_MS = 5000;

/** A stream's acknowledgement of a publish, or its refusal. */
interface PubAckReply {
  stream?: string;
  seq?: number;
  duplicate?: boolean;
  error?: ApiError;
}

interface Waiting {
  subject: string;
  deadline: number;
  resolve: (ack: { seq: number; duplicate: boolean }) => void;
  reject: (err: Error) => void;
}

const decoder = new TextDecoder();

/**
 * Publishes through JetStream, all at once, and waits for every ack (the runner's publisher).
 *
 * Each message is a core NATS publish whose reply subject is a token of an inbox of the
 * connection's; the stream's acknowledgement comes back on it and is matched by the token. The
 * JetStream client's `publish` does the same through its request machinery, which builds,
 * per message, a request object, a timer and a timeout promise raced against the reply,
 * header maps copied from its options and a retry loop: ~17 µs of CPU and ~6 KB of garbage
 * a publish, against ~10 µs here (`node dist/bench/publish-cost.js`, docs/performance.md). Here
 * one timer a second looks for acks overdue while any publish waits.
 *
 * Answers are read as that client reads them: a refusal rejects with the stream's error
 * (JetStreamApiError: a msgId seen or an expected sequence, a full stream), "no responders"
 * (no stream takes the subject) with NoRespondersError, no ack after `timeoutMs` (found within
 * a second of it) with TimeoutError. A publish the connection could not take (closed,
 * draining) rejects at once.
 */
export function jetstreamPublisher(nc: NatsConnection, timeoutMs = PUBLISH_ACK_TIMEOUT_MS): Publisher {
  return {
    async publish(messages: readonly Emit[]): Promise<Published[]> {
      const inbox = ackInboxOf(nc);
      const acks = await Promise.all(messages.map((m) => inbox.publish(m, timeoutMs)));
      return acks.map((ack, i) => ({ subject: messages[i]!.subject, seq: ack.seq, duplicate: ack.duplicate }));
    },
  };
}

/**
 * One inbox a connection, shared by all its publishers: a process makes a runner, and so a
 * publisher, for every partition it comes to own, and a subscription each would pile up as
 * ownership moves. Made on first use, so a publisher never used costs the server nothing.
 */
const inboxes = new WeakMap<NatsConnection, AckInbox>();

function ackInboxOf(nc: NatsConnection): AckInbox {
  let inbox = inboxes.get(nc);
  if (!inbox) inboxes.set(nc, (inbox = new AckInbox(nc)));
  return inbox;
}

/** How often overdue acks are looked for, while any publish waits. */
const SWEEP_MS = 1000;

class AckInbox {
  private readonly prefix: string;
  private readonly waiting = new Map<string, Waiting>();
  private next = 0;
  private sweep: NodeJS.Timeout | null = null;

  constructor(private readonly nc: NatsConnection) {
    // the connection's inbox prefix, where a deployment's permissions set one
    const prefix = (nc as unknown as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
    this.prefix = `${createInbox(prefix)}.`;
    nc.subscribe(`${this.prefix}*`, { callback: (err, msg) => this.answered(err, msg) });
  }

  publish(m: Emit, timeoutMs: number): Promise<{ seq: number; duplicate: boolean }> {
    return new Promise((resolve, reject) => {
      const token = (this.next++).toString(36);
      const reply = this.prefix + token;
      this.waiting.set(token, { subject: m.subject, deadline: Date.now() + timeoutMs, resolve, reject });
      try {
        if (m.msgId) {
          const h = headers();
          h.set('Nats-Msg-Id', m.msgId);
          this.nc.publish(m.subject, m.data, { reply, headers: h });
        } else {
          this.nc.publish(m.subject, m.data, { reply });
        }
      } catch (err) {
        this.waiting.delete(token);
        reject(err as Error);
        return;
      }
      this.sweep ??= setInterval(() => this.expire(), SWEEP_MS);
    });
  }

  private answered(err: Error | null, msg: Msg): void {
    if (err) {
      // the inbox's subscription failed (a permissions violation): nothing will be answered
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
      return;
    }
    const token = msg.subject.slice(this.prefix.length);
    const w = this.waiting.get(token);
    if (!w) return; // answered after it timed out
    this.waiting.delete(token);
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      w.reject(new NoRespondersError(w.subject));
      return;
    }
    let ack: PubAckReply;
    try {
      ack = JSON.parse(decoder.decode(msg.data)) as PubAckReply;
    } catch {
      w.reject(new JetStreamError(`publish to ${w.subject}: unreadable acknowledgement`));
      return;
    }
    if (ack.error) w.reject(new JetStreamApiError(ack.error));
    else if (!ack.stream || typeof ack.seq !== 'number') w.reject(new JetStreamError('invalid ack response'));
    else w.resolve({ seq: ack.seq, duplicate: ack.duplicate === true });
  }

  /** Rejects the publishes whose ack is overdue; stops looking while none waits. */
  private expire(): void {
    const now = Date.now();
    for (const [token, w] of this.waiting) {
      if (w.deadline > now) continue;
      this.waiting.delete(token);
      w.reject(new TimeoutError());
    }
    if (this.waiting.size === 0 && this.sweep) {
      clearInterval(this.sweep);
      this.sweep = null;
    }
  }
}
