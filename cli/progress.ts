import type { StreamAdmin } from '../ports/stream-admin.js';
import type { StageMetrics } from '../pipeline/metrics.js';
import { pipelineBacklog } from '../app/backlog.js';
import { formatWaitSummary, type WaitSummary } from '../stages/politeness-gate/index.js';

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

export interface ProgressFigures {
  pagesPerSecond: number;
  fetched: number;
  queued: number;
  errors: number;
  hosts: number;
  stored: number;
  /** when no stage has work: the hosts whose queued URLs wait, and why (queued counts messages in the stages) */
  waiting: WaitSummary | null;
}

/**
 * Live progress on stderr: rewritten in place on a terminal, a log line every 10 s otherwise.
 * Figures come from this process's counters and the consumers' backlog on the server; when
 * the consumers are empty, `waits` says which hosts still hold queued URLs and why, so a
 * crawl that only waits (for a robots.txt to come back, a backoff, a long Crawl-delay)
 * says so instead of showing nothing queued.
 */
export function startProgress(
  admin: StreamAdmin,
  metrics: StageMetrics,
  stream: NodeJS.WriteStream = process.stderr,
  waits?: () => Promise<WaitSummary>,
) {
  const tty = stream.isTTY === true;
  const started = Date.now();
  let lastFetched = 0;
  let lastAt = started;
  let latest: ProgressFigures = { pagesPerSecond: 0, fetched: 0, queued: 0, errors: 0, hosts: 0, stored: 0, waiting: null };

  const tick = async () => {
    const backlog = await pipelineBacklog(admin).catch(() => null);
    const fetched = metrics.total('fetch', 'responses');
    // failed requests: HTTP 4xx/5xx and network errors (redirects are not failures)
    const errors = metrics.total('fetch', 'responses', (o) => o === 'error' || o === '4xx' || o === '5xx');
    const now = Date.now();
    const rate = ((fetched - lastFetched) * 1000) / Math.max(1, now - lastAt);
    lastFetched = fetched;
    lastAt = now;
    // the host scan costs a few KV reads per busy host: only when nothing else is moving
    const waiting = backlog?.total === 0 && waits ? await waits().catch(() => null) : null;
    latest = {
      pagesPerSecond: Math.round(rate * 10) / 10,
      fetched,
      queued: backlog?.total ?? latest.queued,
      errors,
      hosts: metrics.total('politeness-gate', 'robots_fetches'),
      stored: metrics.total('persist', 'rows', 'page'),
      waiting,
    };
    const line =
      `${Math.round((now - started) / 1000)}s  ${latest.pagesPerSecond} pages/s  fetched ${fetched}  stored ${latest.stored}` +
      `  queued ${latest.queued}  errors ${errors}  hosts ${latest.hosts}  rss ${mb(process.memoryUsage.rss())} MB` +
      (waiting && waiting.hosts > 0 ? `  ${formatWaitSummary(waiting, Date.now())}` : '');
    if (process.env.CRAWL_DEBUG_MEMORY) {
      const m = process.memoryUsage();
      stream.write(`memory: heap ${mb(m.heapUsed)}/${mb(m.heapTotal)} MB, external ${mb(m.external)} MB, array buffers ${mb(m.arrayBuffers)} MB\n`);
    }
    if (tty) stream.write(`\r\x1b[K${line}`);
    else stream.write(`progress: ${line}\n`);
  };
  let ticking = false;
  const timer = setInterval(() => {
    if (ticking) return; // a slow scan of the hosts never piles up ticks
    ticking = true;
    void tick().finally(() => (ticking = false));
  }, tty ? 1000 : 10_000);
  return {
    figures: () => latest,
    stop() {
      clearInterval(timer);
      if (tty) stream.write('\n');
    },
  };
}
