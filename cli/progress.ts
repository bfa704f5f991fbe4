import type { JetStreamManager } from '@nats-io/jetstream';
import type { StageMetrics } from '../pipeline/metrics.js';
import { pipelineBacklog } from '../pipeline/crawl-node.js';

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

export interface ProgressFigures {
  pagesPerSecond: number;
  fetched: number;
  queued: number;
  errors: number;
  hosts: number;
  stored: number;
}

/**
 * Live progress on stderr: rewritten in place on a terminal, a log line every 10 s otherwise.
 * Figures come from this process's counters and the consumers' backlog on the server.
 */
export function startProgress(jsm: JetStreamManager, metrics: StageMetrics, stream: NodeJS.WriteStream = process.stderr) {
  const tty = stream.isTTY === true;
  const started = Date.now();
  let lastFetched = 0;
  let lastAt = started;
  let latest: ProgressFigures = { pagesPerSecond: 0, fetched: 0, queued: 0, errors: 0, hosts: 0, stored: 0 };

  const tick = async () => {
    const backlog = await pipelineBacklog(jsm).catch(() => null);
    const fetched = metrics.total('fetch', 'responses');
    // failed requests: HTTP 4xx/5xx and network errors (redirects are not failures)
    const errors = metrics.total('fetch', 'responses', (o) => o.startsWith('error_') || Number(o) >= 400);
    const now = Date.now();
    const rate = ((fetched - lastFetched) * 1000) / Math.max(1, now - lastAt);
    lastFetched = fetched;
    lastAt = now;
    latest = {
      pagesPerSecond: Math.round(rate * 10) / 10,
      fetched,
      queued: backlog?.total ?? latest.queued,
      errors,
      hosts: metrics.total('politeness-gate', 'robots_fetches'),
      stored: metrics.total('persist', 'rows', 'page'),
    };
    const line =
      `${Math.round((now - started) / 1000)}s  ${latest.pagesPerSecond} pages/s  fetched ${fetched}  stored ${latest.stored}` +
      `  queued ${latest.queued}  errors ${errors}  hosts ${latest.hosts}  rss ${mb(process.memoryUsage.rss())} MB`;
    if (process.env.CRAWL_DEBUG_MEMORY) {
      const m = process.memoryUsage();
      stream.write(`memory: heap ${mb(m.heapUsed)}/${mb(m.heapTotal)} MB, external ${mb(m.external)} MB, array buffers ${mb(m.arrayBuffers)} MB\n`);
    }
    if (tty) stream.write(`\r\x1b[K${line}`);
    else stream.write(`progress: ${line}\n`);
  };
  const timer = setInterval(() => void tick(), tty ? 1000 : 10_000);
  return {
    figures: () => latest,
    stop() {
      clearInterval(timer);
      if (tty) stream.write('\n');
    },
  };
}
