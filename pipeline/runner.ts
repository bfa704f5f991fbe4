import { jetstream, type JetStreamClient, type JsMsg, type ConsumerMessages } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { SchemaError, encodeDeadLetter } from '../schemas/index.js';
import { deadLetterSubject } from '../topology/index.js';
import { Semaphore } from './semaphore.js';
import { jetstreamPublisher } from './adapters/stream-access.js';
import type { Published, Publisher } from '../ports/streams.js';
import type { BackgroundTask, ConsumerStage, Disposition, StageContext } from './stage.js';

/** A handler that throws this many times in a row is dead-lettered instead of retried again. */
export const MAX_HANDLER_ATTEMPTS = 6;

/** Backoff for a handler that threw (an infrastructure fault, e.g. KV unavailable): 1 s, 2 s, 4 s … 30 s. */
export function errorBackoffMs(deliveryCount: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, deliveryCount - 1));
}

export interface RunnerOptions {
  concurrency: number;
}

/**
 * Runs one stage against its durable consumer: the only code that acks, naks and
 * dead-letters. Outputs are published and their acks awaited before the input is acked,
 * so a process killed at any moment loses nothing (its unacked input is redelivered).
 */
export class StageRunner<T> {
  private readonly js: JetStreamClient;
  private messages: ConsumerMessages | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private background: BackgroundTask | undefined;
  private readonly slots: Semaphore;
  /** every publish of this stage, its outputs and its background work's, goes through here */
  private readonly publisher: Publisher;

  constructor(
    nc: NatsConnection,
    private readonly def: ConsumerStage<T>,
    private readonly ctx: StageContext,
    private readonly opts: RunnerOptions,
  ) {
    this.js = jetstream(nc);
    this.publisher = jetstreamPublisher(this.js, nc.info?.max_payload);
    this.slots = new Semaphore(opts.concurrency);
  }

  async start(): Promise<void> {
    const consumer = await this.js.consumers.get(this.def.input.stream, this.def.input.durable);
    // pull a little more than we can work on, so the next message is ready when a slot frees;
    // the extra is capped, since each buffered message holds its payload (a page, for some stages)
    const extra = Math.min(this.opts.concurrency, 64);
    this.messages = await consumer.consume({ max_messages: Math.max(2, this.opts.concurrency + extra) });
    this.loop = this.consumeLoop(this.messages);
    this.background = await this.def.background?.({ ...this.ctx, publisher: this.publisher });
  }

  private async consumeLoop(messages: ConsumerMessages): Promise<void> {
    for await (const msg of messages) {
      await this.slots.acquire();
      const task = this.process(msg).finally(() => {
        this.inFlight.delete(task);
        this.slots.release();
      });
      this.inFlight.add(task);
    }
  }

  private async process(msg: JsMsg): Promise<void> {
    const { def, ctx } = this;
    const deliveryCount = msg.info.deliveryCount;
    const started = performance.now();
    const handled = (outcome: string) => ctx.metrics.handled(def.name, outcome, (performance.now() - started) / 1000);
    ctx.metrics.inFlightChange(def.name, 1);
    const heartbeat = setInterval(() => msg.working(), Math.max(500, Math.floor(def.input.ackWaitMs / 3)));
    try {
      let disposition: Disposition;
      try {
        const message = def.decode(msg.subject, msg.data);
        disposition = await def.handle({ subject: msg.subject, message, deliveryCount, streamSeq: msg.seq, publishedAt: Math.floor(msg.info.timestampNanos / 1e6) }, ctx);
      } catch (err) {
        if (err instanceof SchemaError) {
          disposition = { kind: 'fail', reason: err.message };
        } else if (deliveryCount >= MAX_HANDLER_ATTEMPTS) {
          disposition = { kind: 'fail', reason: `handler failed ${deliveryCount} times: ${(err as Error).message}` };
        } else {
          ctx.log.warn({ stage: def.name, subject: msg.subject, err: (err as Error).message, deliveryCount }, 'handler failed; will retry');
          handled('error');
          msg.nak(errorBackoffMs(deliveryCount));
          return;
        }
      }
      handled(await this.settle(msg, disposition));
    } catch (err) {
      // publishing (or the step before the ack) failed: server unavailable, publish timeout; let the server redeliver
      ctx.log.warn({ stage: def.name, err: (err as Error).message }, 'publishing outputs failed; will retry');
      handled('publish_error');
      try {
        msg.nak(errorBackoffMs(deliveryCount));
      } catch {
        /* connection gone: the ack wait expires and the server redelivers */
      }
    } finally {
      clearInterval(heartbeat);
      ctx.metrics.inFlightChange(def.name, -1);
    }
  }

  /** Acts on the disposition; returns what was done, for the metrics. */
  private async settle(msg: JsMsg, disposition: Disposition): Promise<string> {
    const { def, ctx } = this;
    switch (disposition.kind) {
      case 'emit': {
        let published: readonly Published[];
        try {
          published = await this.publisher.publish(disposition.messages);
          // a failure here naks the input (see process): it is redelivered and its publishes deduplicated
          if (disposition.beforeAck) await disposition.beforeAck(published);
        } catch (err) {
          await disposition.onPublishFailed?.(err as Error).catch((e: Error) =>
            ctx.log.warn({ stage: def.name, err: e.message }, 'keeping what the handling learnt failed too'),
          );
          throw err;
        }
        if (disposition.afterPublish) {
          await disposition.afterPublish(published).catch((err: Error) =>
            ctx.log.warn({ stage: def.name, err: err.message }, 'after-publish step failed; its state expires on its own'),
          );
        }
        msg.ack();
        return disposition.messages.length === 0 && !disposition.stored ? 'filtered' : 'emitted';
      }
      case 'retry':
        msg.nak(Math.max(0, Math.round(disposition.afterMs)));
        return 'retry';
      case 'fail':
        await this.deadLetter(msg, disposition.reason);
        msg.ack();
        ctx.log.error({ stage: def.name, subject: msg.subject, seq: msg.seq, reason: disposition.reason }, 'message dead-lettered');
        return 'dead_lettered';
    }
  }

  private async deadLetter(msg: JsMsg, reason: string): Promise<void> {
    const data = encodeDeadLetter({
      v: 1,
      stage: this.def.name,
      subject: msg.subject,
      stream_seq: msg.seq,
      delivery_count: msg.info.deliveryCount,
      reason,
      failed_at: this.ctx.clock.now(),
      data: msg.data,
    });
    const h = natsHeaders();
    h.set('Crawl-Dead-Letter-Reason', reason.slice(0, 500).replace(/[\r\n]/g, ' '));
    await this.js.publish(deadLetterSubject(this.def.name), data, {
      msgID: `dlq:${this.def.input.stream}:${msg.seq}`,
      headers: h,
    });
  }

  /** Stops pulling, lets in-flight messages finish, then lets the stage flush. Safe to call twice. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.messages?.stop();
      await this.loop?.catch(() => undefined);
      await Promise.allSettled([...this.inFlight]);
      await this.background?.stop();
      await this.def.close?.(this.ctx);
    })();
    return this.stopping;
  }
}
