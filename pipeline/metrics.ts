import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/**
 * What another thread's metrics are as it last sent them (a stage thread of `crawl run`):
 * its registry's series, and the running totals `total()` reads.
 */
export interface MetricsSnapshot {
  series: Array<MetricObjectWithValues<MetricValue<string>>>;
  totals: Array<[string, number]>;
}

/**
 * A process's metrics, in one prom-client registry that `/metrics` serves
 * (pipeline/metrics-server.ts); docs/operations.md lists every name.
 *
 * - what a stage counts itself goes through `count`: `crawler_<stage>_<what>_total{outcome}`,
 *   outcome being one of a fixed set of words the stage's code chooses;
 * - what the runner measures for every stage is one family with a `stage` label
 *   (`crawler_stage_messages_total`, `crawler_stage_handle_seconds`), so a dashboard sums or
 *   compares stages in one query;
 * - KV and consumer figures carry the bucket, operation, stream and consumer: names from the
 *   topology, so every label set is bounded.
 * No label ever holds a URL, a host, a path or anything read from the web or the environment.
 */
/** How often the event loop's lag is sampled (`nodejs_eventloop_lag_*`): a stall shorter than this may go unseen. */
export const EVENT_LOOP_SAMPLE_MS = 100;

export class StageMetrics {
  readonly registry: Registry;
  private readonly counters = new Map<string, Counter<'outcome'>>();
  private readonly totals = new Map<string, number>();
  private readonly messages: Counter<'stage' | 'outcome'>;
  private readonly handleSeconds: Histogram<'stage' | 'outcome'>;
  private readonly inFlight: Gauge<'stage'>;
  private readonly kvSeconds: Histogram<'bucket' | 'op' | 'outcome'>;
  private readonly reconnects: Counter;
  /** the other threads' latest snapshots, by thread: added to this thread's own when served and in total() */
  private readonly others = new Map<string, MetricsSnapshot>();

  constructor(registry = new Registry()) {
    this.registry = registry;
    this.messages = new Counter({
      name: 'crawler_stage_messages_total',
      help: 'input messages a stage finished with, by what the runner did: emitted, filtered, retry, dead_lettered, error (handler threw; redelivered), publish_error',
      labelNames: ['stage', 'outcome'],
      registers: [registry],
    });
    this.handleSeconds = new Histogram({
      name: 'crawler_stage_handle_seconds',
      help: 'time from taking an input message to settling it (handle, publish, ack), by stage and outcome',
      labelNames: ['stage', 'outcome'],
      // a seen-filter check takes a millisecond, a fetch of a slow host tens of seconds
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.inFlight = new Gauge({ name: 'crawler_stage_in_flight_messages', help: 'messages a stage is handling now in this process', labelNames: ['stage'], registers: [registry] });
    this.kvSeconds = new Histogram({
      name: 'crawler_kv_operation_seconds',
      help: 'latency of key-value operations on the crawl buckets, by bucket, operation and outcome (ok, conflict, error)',
      labelNames: ['bucket', 'op', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    this.reconnects = new Counter({ name: 'crawler_nats_reconnects_total', help: 'times this process reconnected to a NATS server', registers: [registry] });
  }

  /**
   * Adds the process metrics (CPU, memory, event loop lag, handles): once, for a registry
   * that is served. The event loop's lag is sampled every EVENT_LOOP_SAMPLE_MS instead of
   * prom-client's 10 ms: its timer woke an idle crawl a hundred times a second.
   */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** The counter `crawler_<stage>_<what>_total{outcome}`, created (with no series yet) on first use. */
  declare(stage: string, what: string): Counter<'outcome'> {
    const name = `crawler_${stage.replaceAll('-', '_')}_${what}_total`;
    let counter = this.counters.get(name);
    if (!counter) {
      counter = new Counter({ name, help: `${what.replaceAll('_', ' ')} in stage ${stage}, by outcome`, labelNames: ['outcome'], registers: [this.registry] });
      this.counters.set(name, counter);
    }
    return counter;
  }

  count(stage: string, what: string, outcome = 'ok', by = 1): void {
    this.declare(stage, what).inc({ outcome }, by);
    const key = `${stage}/${what}/${outcome}`;
    this.totals.set(key, (this.totals.get(key) ?? 0) + by);
  }

  /** The runner's record of one input message: its outcome and how long it took. */
  handled(stage: string, outcome: string, seconds: number): void {
    this.messages.inc({ stage, outcome });
    this.handleSeconds.observe({ stage, outcome }, seconds);
    const key = `${stage}/messages/${outcome}`;
    this.totals.set(key, (this.totals.get(key) ?? 0) + 1);
  }

  /** A message taken (+1) or settled (-1) by a stage's runner. */
  inFlightChange(stage: string, by: 1 | -1): void {
    this.inFlight.inc({ stage }, by);
  }

  kvOperation(bucket: string, op: string, outcome: 'ok' | 'conflict' | 'error', seconds: number): void {
    this.kvSeconds.observe({ bucket, op, outcome }, seconds);
  }

  reconnected(): void {
    this.reconnects.inc();
  }

  /**
   * A gauge whose values are read when it is scraped (consumer lag, waiting hosts): `read`
   * returns every series. A read that fails leaves the gauge empty for that scrape rather
   * than failing the whole page.
   */
  collectedGauge<L extends string>(name: string, help: string, labelNames: readonly L[], read: () => Promise<Array<{ labels: Record<L, string>; value: number }>>): void {
    this.replacing(name);
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        const series = await read().catch(() => []);
        for (const s of series) this.set(s.labels as never, s.value);
      },
    });
  }

  /**
   * The DNS cache's figures, read when scraped: `crawler_dns_lookups_total{answer}` (cache,
   * negative_cache, shared: joined a lookup under way, resolved: sent to DNS), and the gauges
   * `crawler_dns_lookups_in_flight`, `crawler_dns_lookups_queued` (waiting for a slot under
   * --dns-max-in-flight) and `crawler_dns_cache_entries`.
   */
  dnsCache(read: () => { hits: number; negativeHits: number; shared: number; resolved: number; inFlight: number; queued: number; entries: number }): void {
    const registers = [this.registry];
    this.replacing('crawler_dns_lookups_total');
    new Counter({
      name: 'crawler_dns_lookups_total',
      help: 'host name lookups by where the answer came from: cache, negative_cache (a cached NXDOMAIN, NODATA or failure), shared (a lookup of the name under way), resolved (asked DNS)',
      labelNames: ['answer'],
      registers,
      collect() {
        const s = read();
        this.reset();
        this.inc({ answer: 'cache' }, s.hits);
        this.inc({ answer: 'negative_cache' }, s.negativeHits);
        this.inc({ answer: 'shared' }, s.shared);
        this.inc({ answer: 'resolved' }, s.resolved);
      },
    });
    const gauge = (name: string, help: string, value: (s: ReturnType<typeof read>) => number) => {
      this.replacing(name);
      return new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value(read()));
        },
      });
    };
    gauge('crawler_dns_lookups_in_flight', 'DNS lookups out now', (s) => s.inFlight);
    gauge('crawler_dns_lookups_queued', 'DNS lookups waiting for a slot (--dns-max-in-flight)', (s) => s.queued);
    gauge('crawler_dns_cache_entries', 'host names in the DNS cache', (s) => s.entries);
  }

  /**
   * A metric read at scrape time belongs to the newest reader: a node started again in the same
   * process (a worker retrying its start while a cluster elects leaders) registers its readers
   * again, and the first attempt's cache or streams are gone.
   */
  private replacing(name: string): void {
    this.registry.removeSingleMetric(name);
  }

  /** the running total of one counter, summed over outcomes unless one is named (or a test on it given), over every thread */
  total(stage: string, what: string, outcome?: string | ((outcome: string) => boolean)): number {
    let sum = 0;
    const add = (key: string, value: number) => {
      const [s, w, o] = key.split('/');
      if (s !== stage || w !== what) return;
      if (outcome === undefined || (typeof outcome === 'function' ? outcome(o!) : o === outcome)) sum += value;
    };
    for (const [key, value] of this.totals) add(key, value);
    for (const other of this.others.values()) for (const [key, value] of other.totals) add(key, value);
    return sum;
  }

  /** The content type of {@link exposition}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** This thread's metrics, for the thread that serves them. */
  async snapshot(): Promise<MetricsSnapshot> {
    return { series: await this.registry.getMetricsAsJSON(), totals: [...this.totals] };
  }

  /** Another thread's latest snapshot, served and totalled with this thread's own from now on. */
  absorb(thread: string, snapshot: MetricsSnapshot): void {
    this.others.set(thread, snapshot);
  }

  /**
   * The Prometheus text `/metrics` serves: this thread's registry, with every other thread's
   * latest snapshot added series by series (counters and histograms summed, so a dashboard
   * sees one process whatever its threads).
   */
  async exposition(): Promise<string> {
    if (this.others.size === 0) return this.registry.metrics();
    const own = await this.registry.getMetricsAsJSON();
    return AggregatorRegistry.aggregate([own, ...[...this.others.values()].map((o) => o.series)]).metrics();
  }
}
