/**
 * The hostile web, end to end: a real crawl of every misbehaving endpoint of hostile.test
 * (testweb/hostile-hosts.ts) together with four ordinary site hosts on the same IP, every stage
 * in its own `crawl worker` process against one nats-server, so that the fetch process can be
 * measured on its own. Judged from the output (fetch_log, pages) and from the test web's own
 * request log:
 *
 *  1. the crawl becomes idle within IDLE_WITHIN_MS, and every worker exits 0 on SIGTERM;
 *  2. every hostile URL (chain and loop members included) ends with a terminal outcome
 *     HOSTILE_PATHS accepts for it, with a reason that says what happened;
 *  3. the 51-hop /chain/* is cut after MAX_REDIRECTS followed hops, the redirect loop is caught;
 *  4. nothing reaches a forbidden address: the test web's listener answers the IP-literal host
 *     127.0.0.1 (the /to-loopback target) and never sees a request for it; 169.254.169.254
 *     cannot be listened on, so its URL must end without a fetch (filtered or refused);
 *  5. the ordinary site hosts are crawled completely despite their hostile neighbour;
 *  6. the fetch process's peak RSS (VmHWM, polled from /proc) stays under FETCH_RSS_BOUND_MB.
 *
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  expectedCrawl,
  startTestWeb,
  HOSTILE_DEFAULTS,
  HOSTILE_HOST,
  HOSTILE_PATHS,
  HOSTILE_SEED_URL,
  LOOPBACK_HOST,
  LOOPBACK_SECRET_MARKER,
  LOOPBACK_SECRET_PATH,
  METADATA_URL,
  type RequestRecord,
  type TestWeb,
} from '../../testweb/index.js';
import { compressionBomb } from '../../testweb/hostile-hosts.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { MAX_REDIRECTS } from '../../stages/fetch/attempt-messages.js';
import { runCli } from '../support/crawl-cli.js';
import { startWorkers, useWorkerCrawl, waitUntilIdle } from '../support/worker-crawl.js';

const TOKEN = 'testcrawler';
const SITE = { hosts: 4, pagesPerHost: 10, seed: 5 };
const MAX_DEPTH = 3;
/** The default body cap (--max-page-bytes is not given). */
const MAX_BODY_BYTES = 5 * 1024 * 1024;
/** Longest the crawl may take to become idle (it took 55 s on a shared 2-core machine). */
const IDLE_WITHIN_MS = 180_000;
/** Bound on the fetch process's peak RSS; measured 157 MB (the test prints it). */
const FETCH_RSS_BOUND_MB = 400;
const STAGES = ['normalize', 'seen-filter', 'politeness-gate', 'fetch', 'extract', 'simhash', 'persist', 'archive'] as const;

function settingsArgs(web: TestWeb): string[] {
  const args = [
    '--user-agent', `${TOKEN}/1.0 (+http://127.0.0.1/contact)`,
    '--timeout-ms', '4000',
    '--min-transfer-rate', '1024',
    // /flaky-500 answers 500 to its first two GETs: two retries let its 200 through
    '--max-retries', '2',
    '--backoff-base-ms', '200',
    // the hostile host fails many requests in a row: keep its backoff and pause short
    '--max-backoff-ms', '2000',
    '--pause-ms', '2000',
    // and not paused at all: a paused host's URLs waiting for a retry end unretried (a failing
    // host's bounded cost, tested in failing-host.test.ts and failing-hosts.test.ts), and this
    // crawl reaches 4 failures in a row: a pause would take /flaky-500's second try
    '--pause-after-failures', '10',
    '--min-delay-ms', '100',
    '--max-per-ip', '4',
    '--max-depth', String(MAX_DEPTH),
  ];
  for (const rule of web.resolveRules) args.push('--resolve', rule);
  return args;
}

const hostileUrl = (p: string) => `http://${HOSTILE_HOST}${p}`;

/** What the reason of each hostile URL's terminal row must say. */
const REASONS: Record<string, RegExp> = {
  '/endless': /total timeout|too slow|truncated at the size cap/,
  '/drip': /total timeout|too slow/,
  '/gzip-bomb': /decompression bomb/,
  '/br-bomb': /decompression bomb/,
  '/huge': /truncated at the size cap/,
  '/big-headers': /header/i,
  '/redirect-loop': /^redirect to http:\/\/hostile\.test\/redirect-loop-b$|redirect loop/,
  '/redirect-loop-b': /redirect loop/,
  '/chain/0': /^redirect to http:\/\/hostile\.test\/chain\/1$/,
  '/cl-short': /other side closed|premature|content-length|reset|truncat/i,
  '/cl-long': /^stored$|other side closed|content-length/i,
  '/bad-chunked': /chunk size/i,
  '/reset': /ECONNRESET|reset/,
  '/to-loopback': new RegExp(`^redirect to http://${LOOPBACK_HOST.replace(/\./g, '\\.')}:\\d+${LOOPBACK_SECRET_PATH}$`),
  '/to-metadata': new RegExp(`^redirect to ${METADATA_URL.replace(/[./]/g, '\\$&')}$`),
  '/garbage': /^stored$|content type/,
  '/latin1': /^stored$/,
  '/sjis': /^stored$/,
  '/bom-utf16': /^stored$/,
  '/doc.pdf': /^application\/pdf: not stored; 3 links harvested$|^stored$/,
  '/etag': /^stored$/,
  '/flaky-500': /^stored$/,
};

interface LogRow {
  url: string;
  outcome: string;
  reason: string;
  fetch_status: number | null;
  fetch_redirect: string | null;
  fetch_time: number;
}

/** VmHWM (peak) and VmRSS of a process in MB, or null once it is gone. */
function memoryOf(pid: number): { hwm: number; rss: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
  } catch {
    return null;
  }
}

describe('hostile web: every hostile endpoint next to ordinary hosts, one process per stage', () => {
  const crawl = useWorkerCrawl(async () => {
    const web = await startTestWeb({ ...SITE, hostile: true });
    // the bombs are built lazily by the first request for them (seconds of CPU): build them
    // now, so that the crawler meets a bomb and not a server slow to send its headers
    await Promise.all([compressionBomb('gzip', HOSTILE_DEFAULTS.bombBytes), compressionBomb('br', HOSTILE_DEFAULTS.bombBytes)]);
    return web;
  }, 'crawl-hostile-');

  // filled in by the crawl (the first test); the others judge it
  let crawled = false;
  let peakMb = 0;
  let requests: RequestRecord[] = [];
  let rows: LogRow[] = [];
  /** per URL, its last fetch_log row other than `retry` */
  const terminal = new Map<string, LogRow>();
  const pages = new Map<string, { truncated: boolean; length: number }>();
  let secretPages = -1;

  const crawlOk = () => assert.ok(crawled, 'the crawl did not complete (see the first test)');
  const requestsTo = (host: string, p: string) => requests.filter((r) => r.host === host && r.path === p && r.method === 'GET');

  it('1. the crawl becomes idle in bounded time and every worker exits 0 on SIGTERM', { timeout: IDLE_WITHIN_MS + 60_000 }, async () => {
    const { web, out, nats, env, workers } = crawl;
    const applied = await runCli(['topology', 'apply', ...settingsArgs(web)], env);
    assert.equal(applied.code, 0, applied.stderr);
    workers.push(...startWorkers(STAGES, out, env));
    const fetchPid = workers[STAGES.indexOf('fetch')]!.child.pid!;
    const sample = () => {
      const m = memoryOf(fetchPid);
      if (m) peakMb = Math.max(peakMb, m.hwm);
    };
    const poller = setInterval(sample, 200);

    const started = Date.now();
    let idle = false;
    try {
      const seeded = await runCli(['seed', ...web.model.siteHostNames.map((h) => `http://${h}/`), HOSTILE_SEED_URL], env);
      assert.equal(seeded.code, 0, seeded.stderr);
      idle = await waitUntilIdle(nats.url, { timeoutMs: IDLE_WITHIN_MS - (Date.now() - started), started: () => web.requestLog().length > 0 });
    } finally {
      sample(); // VmHWM is the process's peak so far: this last sample covers the whole crawl
      clearInterval(poller);
    }
    const crawlMs = Date.now() - started;
    assert.ok(idle, `the crawl did not become idle within ${IDLE_WITHIN_MS / 1000} s`);
    for (const w of workers) w.child.kill('SIGTERM');
    const exits = await Promise.all(workers.map((w) => w.done));
    workers.length = 0;
    exits.forEach((e, i) => assert.equal(e.code, 0, `the ${STAGES[i]} worker did not shut down cleanly (${e.signal ?? e.code}): ${e.stderr.slice(-2000)}`));

    requests = web.requestLog();
    const db = await openOutputDatabase(out);
    try {
      const res = await db.run('SELECT url, outcome, reason, fetch_status, fetch_redirect, epoch_ms(fetch_time) FROM fetch_log');
      rows = res.rows.map((r) => ({
        url: String(r[0]),
        outcome: String(r[1]),
        reason: String(r[2] ?? ''),
        fetch_status: r[3] === null ? null : Number(r[3]),
        fetch_redirect: r[4] === null ? null : String(r[4]),
        fetch_time: Number(r[5]),
      }));
      for (const r of (await db.run('SELECT url, content_truncated, content_length FROM pages')).rows) {
        pages.set(String(r[0]), { truncated: r[1] === true, length: Number(r[2]) });
      }
      const secret = await db.run(`SELECT count(*) FROM pages WHERE text LIKE '%${LOOPBACK_SECRET_MARKER}%'`);
      secretPages = Number(secret.rows[0]![0]);
    } finally {
      await db.close();
    }
    for (const r of rows) {
      if (r.outcome === 'retry') continue;
      const prev = terminal.get(r.url);
      if (!prev || r.fetch_time >= prev.fetch_time) terminal.set(r.url, r);
    }
    crawled = true;

    console.log(
      `hostile crawl: idle after ${(crawlMs / 1000).toFixed(1)} s, ${requests.length} requests, ${pages.size} pages; ` +
        `fetch process peak RSS (VmHWM) ${peakMb.toFixed(0)} MB (bound ${FETCH_RSS_BOUND_MB} MB)`,
    );
    const siteUrl = (u: string) => web.model.siteHostNames.some((h) => u.startsWith(`http://${h}/`));
    for (const [url, r] of [...terminal].filter(([u]) => !siteUrl(u)).sort(([a], [b]) => a.localeCompare(b))) {
      console.log(`  ${url}  ${r.outcome}  ${r.fetch_status ?? '-'}  ${r.reason}`);
    }
  });

  it('2. every hostile URL ends with an accepted terminal outcome and a clear reason', () => {
    crawlOk();
    const loop = HOSTILE_PATHS.find((p) => p.path === '/redirect-loop')!;
    const chain = HOSTILE_PATHS.find((p) => p.path === '/chain/0')!;
    const cases = [
      ...HOSTILE_PATHS.map((p) => ({ path: p.path, outcomes: p.outcomes as readonly string[], reason: REASONS[p.path] })),
      { path: '/redirect-loop-b', outcomes: loop.outcomes as readonly string[], reason: REASONS['/redirect-loop-b'] },
      // chain members after /chain/0 (the last one is judged in test 3)
      ...Array.from({ length: MAX_REDIRECTS - 1 }, (_, i) => ({
        path: `/chain/${i + 1}`,
        outcomes: chain.outcomes as readonly string[],
        reason: new RegExp(`^redirect to http://hostile\\.test/chain/${i + 2}$`),
      })),
    ];
    const problems: string[] = [];
    for (const c of cases) {
      const r = terminal.get(hostileUrl(c.path));
      if (!r) {
        problems.push(`${c.path}: no terminal fetch_log row`);
        continue;
      }
      const accepted = c.outcomes;
      if (!accepted.includes(r.outcome)) problems.push(`${c.path}: ${r.outcome} "${r.reason}", accepted: ${accepted.join(', ')}`);
      else if (!c.reason?.test(r.reason)) problems.push(`${c.path}: ${r.outcome} with an unclear reason "${r.reason}" (expected ${c.reason})`);
    }
    assert.deepEqual(problems, [], 'hostile URLs without an accepted outcome or a clear reason');

    // what the outcomes promise: the truncated page is marked, no stored page is over the cap,
    // the failures are not pages, and the flaky page got its 200 through retries
    assert.equal(pages.get(hostileUrl('/huge'))?.truncated, true, '/huge is stored marked truncated');
    const oversized = [...pages].filter(([, p]) => p.length > MAX_BODY_BYTES).map(([u, p]) => `${u} (${p.length} bytes)`);
    assert.deepEqual(oversized, [], 'no page is stored over the body cap');
    const failedButStored = cases.filter((c) => terminal.get(hostileUrl(c.path))?.outcome !== 'fetched' && pages.has(hostileUrl(c.path))).map((c) => c.path);
    assert.deepEqual(failedButStored, [], 'a URL whose last outcome is not fetched has no page');
    const flakyRetries = rows.filter((r) => r.url === hostileUrl('/flaky-500') && r.outcome === 'retry');
    assert.equal(flakyRetries.length, HOSTILE_DEFAULTS.flakyFailures, '/flaky-500: one retry row per 500');
    assert.ok(flakyRetries.every((r) => /http 500/.test(r.reason)), flakyRetries.map((r) => r.reason).join('; '));
  });

  it(`3. the 51-hop chain is cut after ${MAX_REDIRECTS} followed redirects; the redirect loop is caught`, () => {
    crawlOk();
    const chainRequests = requests.filter((r) => r.host === HOSTILE_HOST && /^\/chain\/\d+$/.test(r.path) && r.method === 'GET');
    const hops = [...new Set(chainRequests.map((r) => Number(r.path.slice('/chain/'.length))))].sort((a, b) => a - b);
    assert.ok(hops.length <= MAX_REDIRECTS + 1, `at most ${MAX_REDIRECTS + 1} chain URLs fetched, got ${hops.join(', ')}`);
    assert.deepEqual(hops, Array.from({ length: MAX_REDIRECTS + 1 }, (_, i) => i), `the chain was followed from /chain/0 for ${MAX_REDIRECTS} hops`);
    const last = terminal.get(hostileUrl(`/chain/${hops.at(-1)}`));
    assert.ok(last, 'the last chain URL fetched has an outcome');
    assert.match(last.reason, /too many redirects/);
    assert.ok(!rows.some((r) => r.url === hostileUrl(`/chain/${hops.at(-1)! + 1}`) && r.outcome !== 'filtered'), 'the hop past the limit is not fetched');

    for (const p of ['/redirect-loop', '/redirect-loop-b']) assert.ok(requestsTo(HOSTILE_HOST, p).length <= 1, `${p} fetched at most once`);
    const loopEnds = ['/redirect-loop', '/redirect-loop-b'].map((p) => terminal.get(hostileUrl(p))?.reason ?? '');
    assert.ok(loopEnds.some((r) => /redirect loop/.test(r)), `the loop pair ends with "redirect loop": ${loopEnds.join(' | ')}`);
  });

  it('4. no request reaches a forbidden address', () => {
    const { web } = crawl;
    crawlOk();
    const forbidden = requests.filter((r) => r.host === LOOPBACK_HOST || r.path.startsWith(LOOPBACK_SECRET_PATH));
    assert.deepEqual(forbidden.map((r) => `${r.method} ${r.host}${r.path}`), [], 'no request for the loopback target');
    assert.equal(secretPages, 0, 'no stored page carries the loopback secret');

    const redirectTargets = [
      { from: '/to-loopback', target: terminal.get(hostileUrl('/to-loopback'))?.fetch_redirect },
      { from: '/to-metadata', target: terminal.get(hostileUrl('/to-metadata'))?.fetch_redirect },
    ];
    assert.equal(redirectTargets[1]!.target, METADATA_URL, '/to-metadata redirects to the metadata URL');
    assert.match(redirectTargets[0]!.target ?? '', new RegExp(`^http://${LOOPBACK_HOST.replace(/\./g, '\\.')}:${web.port}${LOOPBACK_SECRET_PATH}$`));
    for (const { from, target } of redirectTargets) {
      const r = terminal.get(target!);
      assert.ok(r, `the target of ${from} (${target}) has an outcome`);
      assert.ok(['filtered', 'refused'].includes(r.outcome), `the target of ${from} ends ${r.outcome}: ${r.reason}`);
      assert.ok(!pages.has(target!), `the target of ${from} is not stored`);
    }
  });

  it('5. the ordinary site hosts are complete', () => {
    const { web } = crawl;
    crawlOk();
    const expected = expectedCrawl(web.model, {
      userAgentToken: TOKEN,
      maxDepth: MAX_DEPTH,
      seeds: web.model.siteHostNames.map((h) => `http://${h}/`),
      // the crawler gives a redirect target the depth of the redirecting URL
      redirectHopCost: 0,
    });
    const siteHosts = new Set(web.model.siteHostNames);
    const storedSite = [...pages.keys()].filter((u) => siteHosts.has(new URL(u).hostname)).sort();
    assert.ok(expected.pages.size > 20, `a real site crawl (${expected.pages.size} pages expected)`);
    assert.deepEqual(storedSite, [...expected.pages.keys()].sort());
  });

  it(`6. the fetch process's peak RSS stays under ${FETCH_RSS_BOUND_MB} MB`, () => {
    crawlOk();
    assert.ok(peakMb > 0, 'the fetch process was measured');
    console.log(`fetch process peak RSS: ${peakMb.toFixed(1)} MB (bound ${FETCH_RSS_BOUND_MB} MB)`);
    assert.ok(peakMb < FETCH_RSS_BOUND_MB, `fetch peak RSS ${peakMb.toFixed(0)} MB >= ${FETCH_RSS_BOUND_MB} MB`);
  });
});
