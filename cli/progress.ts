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

/** How often the figures are read while the crawl moves: every second on a terminal, else every 10 s. */
const TTY_READ_MS = 1000;
const LOG_READ_MS = 10_000;
/**
 * While a crawl mostly waits (nothing queued in the stages, fewer than
 * {@link MOVING_PAGES_PER_SECOND} fetched since the last read) each read comes twice as long
 * after the last, up to this. A read asks the server for every consumer's backlog and scans
 * the busy hosts: a few dozen requests, most of what a crawl waiting on politeness would
 * otherwise do between its pages.
 */
const WAITING_READ_MAX_MS = 60_000;
/** Below this rate, with the stages empty, a crawl is waiting on its hosts' delays, not moving. */
const MOVING_PAGES_PER_SECOND = 1;

/**
 * Live progress on stderr: rewritten in place on a terminal, a log line every 10 s otherwise
 * (up to a minute apart while the crawl mostly waits). Figures come from this process's counters
 * and the consumers' backlog on the server; when the consumers are empty, `waits` says which
 * hosts still hold queued URLs and why, so a crawl that only waits (for a robots.txt to come
 * back, a backoff, a long Crawl-delay) says so instead of showing nothing queued.
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

  const baseReadMs = tty ? TTY_READ_MS : LOG_READ_MS;
  let readEveryMs = baseReadMs;
  let nextReadAt = 0;
  /** the figures of the last read, without the clock and the waits' countdown */
  let line = '';

  const read = async () => {
    const backlog = await pipelineBacklog(admin).catch(() => null);
    const fetched = metrics.total('fetch', 'responses');
    // failed requests: HTTP 4xx/5xx and network errors (redirects are not failures)
    const errors = metrics.total('fetch', 'responses', (o) => o === 'error' || o === '4xx' || o === '5xx');
    const now = Date.now();
    const rate = ((fetched - lastFetched) * 1000) / Math.max(1, now - lastAt);
    const stored = metrics.total('persist', 'rows', 'page');
    const moved = rate >= MOVING_PAGES_PER_SECOND || backlog === null || backlog.total > 0;
    readEveryMs = moved ? baseReadMs : Math.min(WAITING_READ_MAX_MS, readEveryMs * 2);
    nextReadAt = now + readEveryMs;
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
      stored,
      waiting,
    };
    line =
      `${latest.pagesPerSecond} pages/s  fetched ${fetched}  stored ${latest.stored}` +
      `  queued ${latest.queued}  errors ${errors}  hosts ${latest.hosts}  rss ${mb(process.memoryUsage.rss())} MB`;
    if (process.env.CRAWL_DEBUG_MEMORY) {
      const m = process.memoryUsage();
      stream.write(`memory: heap ${mb(m.heapUsed)}/${mb(m.heapTotal)} MB, external ${mb(m.external)} MB, array buffers ${mb(m.arrayBuffers)} MB\n`);
    }
  };
  /** On a terminal the line's clock moves every second, and the figures are read when due. */
  const tick = async () => {
    if (!tty || Date.now() >= nextReadAt) await read();
    const now = Date.now();
    const full = `${Math.round((now - started) / 1000)}s  ${line}` + (latest.waiting && latest.waiting.hosts > 0 ? `  ${formatWaitSummary(latest.waiting, now)}` : '');
    if (tty) stream.write(`\r\x1b[K${full}`);
    else stream.write(`progress: ${full}\n`);
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // the next tick is set once this one ends: a slow scan of the hosts never piles them up
  const next = () => {
    timer = setTimeout(() => void tick().finally(() => !stopped && next()), tty ? TTY_READ_MS : readEveryMs);
  };
  next();
  return {
    figures: () => latest,
    stop() {
      stopped = true;
      clearTimeout(timer);
      if (tty) stream.write('\n');
    },
  };
}
