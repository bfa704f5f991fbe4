import { Counter, Registry } from 'prom-client';

/**
 * Per-process counters, named `crawler_<stage>_<what>_total{outcome}`. The progress line of
 * `crawl run` reads them; a `/metrics` endpoint can expose the registry as is.
 */
export class StageMetrics {
  readonly registry: Registry;
  private readonly counters = new Map<string, Counter<'outcome'>>();
  private readonly totals = new Map<string, number>();

  constructor(registry = new Registry()) {
    this.registry = registry;
  }

  count(stage: string, what: string, outcome = 'ok', by = 1): void {
    const name = `crawler_${stage.replaceAll('-', '_')}_${what}_total`;
    let counter = this.counters.get(name);
    if (!counter) {
      counter = new Counter({ name, help: `${what} in stage ${stage}`, labelNames: ['outcome'], registers: [this.registry] });
      this.counters.set(name, counter);
    }
    counter.inc({ outcome }, by);
    const key = `${stage}/${what}/${outcome}`;
    this.totals.set(key, (this.totals.get(key) ?? 0) + by);
  }

  /** the running total of one counter, summed over outcomes unless one is named (or a test on it given) */
  total(stage: string, what: string, outcome?: string | ((outcome: string) => boolean)): number {
    let sum = 0;
    for (const [key, value] of this.totals) {
      const [s, w, o] = key.split('/');
      if (s !== stage || w !== what) continue;
      if (outcome === undefined || (typeof outcome === 'function' ? outcome(o!) : o === outcome)) sum += value;
    }
    return sum;
  }
}
