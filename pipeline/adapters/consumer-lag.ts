import type { JetStreamManager } from '@nats-io/jetstream';
import type { ConsumerLag, ConsumerOf } from '../../ports/stream-admin.js';
import type { StageMetrics } from '../metrics.js';

export type { ConsumerLag } from '../../ports/stream-admin.js';

/**
 * Lag of the durable consumers that serve `specs`, from JetStream's consumer info. A
 * partitioned stage's consumers (`seen-filter-p<N>`) are found by listing the stream.
 * `skipUnreadable`: a consumer whose info cannot be read is left out (a metrics scrape shows
 * the others); otherwise its error is thrown.
 */
export async function readConsumerLag(jsm: JetStreamManager, specs: readonly ConsumerOf[], skipUnreadable = true): Promise<ConsumerLag[]> {
  const out: ConsumerLag[] = [];
  for (const spec of specs) {
    if (spec.partitioned) {
      for await (const info of jsm.consumers.list(spec.stream)) {
        if (!new RegExp(`^${spec.durable}-p\\d+$`).test(info.name)) continue;
        out.push({ stream: spec.stream, consumer: info.name, pending: info.num_pending, ackPending: info.num_ack_pending });
      }
      continue;
    }
    const reading = jsm.consumers.info(spec.stream, spec.durable);
    const info = skipUnreadable ? await reading.catch(() => null) : await reading;
    if (info) out.push({ stream: spec.stream, consumer: spec.durable, pending: info.num_pending, ackPending: info.num_ack_pending });
  }
  return out;
}

/**
 * Registers `crawler_consumer_pending_messages`, `crawler_consumer_ack_pending_messages` and
 * `crawler_consumer_lag_messages` (their sum: what an autoscaler acts on) per stream and
 * consumer. The three are read together, once per scrape.
 */
export function registerConsumerLag(metrics: StageMetrics, jsm: JetStreamManager, specs: () => readonly ConsumerOf[]): void {
  let last: { at: number; lag: Promise<ConsumerLag[]> } | undefined;
  const read = (): Promise<ConsumerLag[]> => {
    // one scrape asks for the three gauges in a row: one round of consumer infos serves them
    if (!last || Date.now() - last.at > 1000) last = { at: Date.now(), lag: readConsumerLag(jsm, specs()) };
    return last.lag;
  };
  const gauge = (name: string, help: string, value: (l: ConsumerLag) => number) =>
    metrics.collectedGauge(name, help, ['stream', 'consumer'], async () =>
      (await read()).map((l) => ({ labels: { stream: l.stream, consumer: l.consumer }, value: value(l) })),
    );
  gauge('crawler_consumer_pending_messages', 'messages of the stream not yet delivered to the consumer', (l) => l.pending);
  gauge('crawler_consumer_ack_pending_messages', 'messages delivered to the consumer and not yet acknowledged', (l) => l.ackPending);
  gauge('crawler_consumer_lag_messages', 'pending plus ack pending: the work a stage has not finished', (l) => l.pending + l.ackPending);
}
