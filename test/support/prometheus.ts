import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../ops/nats/embedded-server.js';
import { stopChild } from '../../ops/nats/local-cluster.js';

/** Debian's prometheus (scripts/setup.sh installs it), or PROMETHEUS_BIN. */
export function findPrometheus(): string {
  for (const c of [process.env.PROMETHEUS_BIN, '/usr/bin/prometheus', '/usr/local/bin/prometheus']) if (c && existsSync(c)) return c;
  throw new Error('prometheus not found: run scripts/setup.sh (it installs Debian\'s prometheus package) or set PROMETHEUS_BIN');
}

export interface TestPrometheus {
  url: string;
  /** the value of an instant PromQL query: every series' labels and value */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  stop(): Promise<void>;
}

/** A real Prometheus on a free loopback port, scraping `targets` every second, its data under `dir`. */
export async function startTestPrometheus(dir: string, targets: string[]): Promise<TestPrometheus> {
  const port = await freePort();
  const config = path.join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    ['global:', '  scrape_interval: 1s', 'scrape_configs:', '  - job_name: crawler', '    static_configs:', `      - targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}]`, ''].join('\n'),
  );
  const child: ChildProcess = spawn(
    findPrometheus(),
    [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = () => stopChild(child);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${stderr.slice(-500)}`);
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (i > 600) {
      await stop();
      throw new Error(`prometheus not ready after 60 s: ${stderr.slice(-500)}`);
    }
    await sleep(100);
  }
  return {
    url,
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await res.json()) as { status: string; error?: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
      if (body.status !== 'success') throw new Error(`query ${promql}: ${body.error}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    stop,
  };
}

/** Metric names in PromQL expressions (ours and the process metrics). */
export function metricNamesIn(expr: string): string[] {
  return [...new Set(expr.match(/\b(?:crawler|process|nodejs)_[a-z0-9_]+\b/g) ?? [])];
}

/** The metric names a /metrics text shows: every sample's, and every declared family's (with its histogram suffixes). */
export function metricNamesOf(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const line of scrape.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) {
      names.add(type[1]!);
      if (type[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(type[1]! + s);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (sample) names.add(sample[1]!);
  }
  return names;
}
