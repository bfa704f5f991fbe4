/**
 * A running `crawl run` watched in windows of stored pages, as `bench:long` and `bench:broad`
 * report it: every half second the crawl's RSS, every 2 s its and the nats-server's CPU and its
 * counters (from its metrics endpoint); a window closes at every `windowPages` stored pages and once at
 * the crawl's total, with its pages/s, peak RSS, CPU per page and the machine probe's median.
 * A crawl whose per-URL or per-host state leaks, or whose costs grow with its size, shows as a
 * trend from the first full window to the last.
 */
import { cpuSeconds, rssMb } from './proc-stats.js';
import { sumOf } from './metrics-text.js';
import { median } from './stats.js';
import type { MachineProbe } from './machine-probe.js';

/** What the crawl has counted so far: stored pages, fetched responses and whatever else a bench reads. */
export interface Counters {
  stored: number;
  fetched: number;
  [name: string]: number;
}

export interface CrawlWindow {
  /** each counter's growth over the window (`stored` is its pages) */
  delta: Counters;
  seconds: number;
  peakRssMb: number;
  /** CPU seconds in the window; null when the crawl had ended before the window closed */
  crawlCpu: number | null;
  natsCpu: number | null;
  /** the machine probe's median in the window, ms (machine-probe.ts): higher is a slower machine */
  probeMs: number;
}

export interface WatchedCrawl {
  windows: CrawlWindow[];
  overallPeakRssMb: number;
  /** the counters as last read */
  last: Counters | null;
  /** when the counters first reached the total (performance.now()), or null */
  totalReachedAt: number | null;
  startedAt: number;
}

/** The crawl's counters from its metrics endpoint: `read(text)` adds a bench's own to stored and fetched. */
export async function scrapeCounters(metricsPort: number, read: (text: string) => Record<string, number> = () => ({})): Promise<Counters | null> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return { ...read(text), stored: sumOf(text, 'crawler_persist_rows_total', (l) => l['outcome'] === 'page'), fetched: sumOf(text, 'crawler_fetch_responses_total') };
  } catch {
    return null;
  }
}

export interface WatchOptions {
  crawlPid: number;
  natsPid: number;
  exited: Promise<unknown>;
  windowPages: number;
  /** pages the crawl can store: the last window closes when the count reaches it */
  total: number;
  probe: MachineProbe;
  read: () => Promise<Counters | null>;
  /** printed as each window closes */
  report: (index: number, storedSoFar: number, w: CrawlWindow) => void;
  /** called after each sample (a bench's own stop rule) */
  onSample?: (c: Counters | null, watch: WatchedCrawl) => void;
}

const SCRAPES_EVERY_TICKS = 4;

export async function watchCrawlWindows(o: WatchOptions): Promise<WatchedCrawl> {
  const watch: WatchedCrawl = { windows: [], overallPeakRssMb: 0, last: null, totalReachedAt: null, startedAt: performance.now() };
  const zero: Counters = { stored: 0, fetched: 0 };
  let mark = { at: watch.startedAt, counters: zero, crawlCpu: 0, natsCpu: cpuSeconds(o.natsPid) ?? 0 };
  let peak = 0;
  let exited = false;
  void o.exited.then(() => (exited = true));
  const close = (c: Counters, asked: { at: number; crawlCpu: number | null; natsCpu: number | null }) => {
    const w: CrawlWindow = {
      delta: difference(c, mark.counters),
      seconds: (asked.at - mark.at) / 1000,
      peakRssMb: peak,
      crawlCpu: asked.crawlCpu === null ? null : asked.crawlCpu - mark.crawlCpu,
      natsCpu: asked.natsCpu === null ? null : asked.natsCpu - mark.natsCpu,
      probeMs: median(o.probe.take()),
    };
    watch.windows.push(w);
    o.report(watch.windows.length, c.stored, w);
    mark = { at: asked.at, counters: c, crawlCpu: asked.crawlCpu ?? mark.crawlCpu, natsCpu: asked.natsCpu ?? mark.natsCpu };
    peak = 0;
  };
  let tick = 0;
  while (!exited) {
    await new Promise((r) => setTimeout(r, 500));
    const rss = rssMb(o.crawlPid);
    peak = Math.max(peak, rss);
    watch.overallPeakRssMb = Math.max(watch.overallPeakRssMb, rss);
    // RSS every half second (a peak is brief), the metrics every 2 s: rendering them is work
    // the crawl would not do otherwise (a Prometheus scrapes every 15 s or so)
    if (tick++ % SCRAPES_EVERY_TICKS !== 0) continue;
    // the time and CPU when the scrape was asked for, which is when the crawl read its counters
    // (prom-client reads them all as the scrape begins): an answer can take a while, and the
    // pages it counts are those of its start
    const asked = { at: performance.now(), crawlCpu: cpuSeconds(o.crawlPid) ?? mark.crawlCpu, natsCpu: cpuSeconds(o.natsPid) ?? mark.natsCpu };
    const c = await o.read();
    if (c !== null) watch.last = c;
    if (c !== null && c.stored >= o.total) watch.totalReachedAt ??= performance.now();
    o.onSample?.(c, watch);
    if (c === null || c.stored <= mark.counters.stored) continue;
    // persist's count may pass the total (a redelivered page is counted again): the total closes one window only
    const reachedTotal = c.stored >= o.total && mark.counters.stored < o.total;
    if (c.stored - mark.counters.stored >= o.windowPages || reachedTotal) close(c, asked);
  }
  // a crawl that ended before its count reached the total closes its last window here, without
  // CPU figures: the process is gone
  if (watch.last !== null && watch.last.stored > mark.counters.stored) close(watch.last, { at: performance.now(), crawlCpu: null, natsCpu: null });
  return watch;
}

function difference(a: Counters, b: Counters): Counters {
  const d: Counters = { stored: a.stored - b.stored, fetched: a.fetched - b.fetched };
  for (const k of Object.keys(a)) d[k] = a[k]! - (b[k] ?? 0);
  return d;
}

export const pagesPerSecond = (w: CrawlWindow) => w.delta.stored / w.seconds;

/** `window 3 (to 60000 pages): 140 pages/s (…), peak RSS 512 MB, CPU per page 8.0 ms crawl + 2.0 ms nats-server, machine probe 14.1 ms` */
export function describeWindow(i: number, storedSoFar: number, w: CrawlWindow, detail = ''): string {
  const perPage = (s: number | null) => (s === null ? '?' : ((1000 * s) / w.delta.stored).toFixed(1));
  return (
    `window ${String(i).padStart(2)} (to ${storedSoFar} pages): ${pagesPerSecond(w).toFixed(0)} pages/s (${w.delta.fetched} responses${detail}), peak RSS ${w.peakRssMb.toFixed(0)} MB, ` +
    `CPU per page ${perPage(w.crawlCpu)} ms crawl + ${perPage(w.natsCpu)} ms nats-server, machine probe ${w.probeMs.toFixed(1)} ms${w.crawlCpu === null ? ' (the crawl had ended: CPU not read)' : ''}`
  );
}

/** CPU ms a page (crawl + nats-server) over the windows whose CPU was read. */
export function cpuMsPerPage(windows: CrawlWindow[]): number {
  const read = windows.filter((w) => w.crawlCpu !== null && w.natsCpu !== null);
  const cpu = read.reduce((s, w) => s + w.crawlCpu! + w.natsCpu!, 0);
  const pages = read.reduce((s, w) => s + w.delta.stored, 0);
  return (1000 * cpu) / pages;
}

/** Within this, peak RSS is flat from the first full window to the last. */
export const FLAT_WITHIN = 0.15;

/**
 * The first full window against the last (a short tail window, the drain, is shown but not
 * compared): pages/s, peak RSS and the machine's speed, and pages/s as if the last window had
 * had the first one's machine. Returns the peak RSS ratio, or null with fewer than two full windows.
 */
export function compareFirstAndLast(windows: CrawlWindow[], windowPages: number): number | null {
  const full = windows.filter((w) => w.delta.stored >= windowPages * 0.9);
  const first = full[0];
  const last = full[full.length - 1];
  if (!first || !last || full.length < 2) return null;
  const rates = full.map(pagesPerSecond);
  const rss = full.map((w) => w.peakRssMb);
  const rssRatio = last.peakRssMb / first.peakRssMb;
  console.log(
    `last full window / first: pages/s ${(pagesPerSecond(last) / pagesPerSecond(first)).toFixed(2)}, peak RSS ${rssRatio.toFixed(2)} ` +
      `(${Math.abs(rssRatio - 1) <= FLAT_WITHIN ? 'flat' : 'NOT flat'} within ${FLAT_WITHIN * 100} %)`,
  );
  console.log(`spread over full windows (max/min): pages/s ${(Math.max(...rates) / Math.min(...rates)).toFixed(2)}, peak RSS ${(Math.max(...rss) / Math.min(...rss)).toFixed(2)}`);
  // a CPU-bound crawl's rate scales with the machine's speed, which the probe's CPU time for
  // fixed work is the inverse of
  const atFirstSpeed = (pagesPerSecond(last) * last.probeMs) / first.probeMs;
  console.log(`machine probe, last full window / first: ${(last.probeMs / first.probeMs).toFixed(2)}; pages/s at the first window's machine speed, last / first: ${(atFirstSpeed / pagesPerSecond(first)).toFixed(2)}`);
  return rssRatio;
}
