/**
 * Reading a crawl's Prometheus text (its `--metrics-port`) in the benches: one counter's
 * series with their labels, without a Prometheus client.
 */

export interface Series {
  labels: Record<string, string>;
  value: number;
}

/** Every series of metric `name` in a scrape (e.g. `crawler_persist_rows_total`). */
export function seriesOf(text: string, name: string): Series[] {
  const series: Series[] = [];
  const line = new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)`, 'gm');
  for (const m of text.matchAll(line)) {
    const labels = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    series.push({ labels, value: Number(m[2]) });
  }
  return series;
}

/** The sum of metric `name` over its series that `keep` accepts (all of them by default). */
export function sumOf(text: string, name: string, keep: (labels: Record<string, string>) => boolean = () => true): number {
  return seriesOf(text, name).reduce((sum, s) => (keep(s.labels) ? sum + s.value : sum), 0);
}
