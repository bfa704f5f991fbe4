/**
 * A real seed list ends cleanly: two healthy test-web hosts beside a name that does not
 * exist (the test DNS server answers NXDOMAIN), a name that resolves to loopback (the SSRF
 * guard refuses it), a host that refuses connections, a host whose robots.txt answers 503,
 * and HTTPS hosts whose certificates cannot be trusted (expired, from an unknown CA, for
 * another name, sent without their intermediate; the crawl trusts the test web's CA). One
 * `crawl run --until-idle` with the default politeness settings (only the robots give-up time
 * shortened): it ends, the healthy hosts are complete, every seed has an outcome that says
 * what happened, and the seeds that cannot heal (the refusing host: refused twice, a few
 * seconds apart) end within seconds. A self-signed host the
 * user exempts with --insecure-host is crawled, over HTTP/2, and its archive says it was not
 * verified. While it waits on the 503 robots.txt, `crawl status` names the host and the next try.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BAD_CERT_HOSTS, expectedCrawl, startTestDns, startTestWeb, ROBOTS_503_HOST, type TestDns, type TestWeb } from '../../testweb/index.js';
import { readWarcFile, warcFiles } from '../support/warc-reader.js';
import { openOutputDatabase } from '../../pipeline/adapters/duckdb-views.js';
import { CLI, runCli, shellQuote, startCli } from '../support/crawl-cli.js';
import { E2E, storedPages } from '../support/e2e-web.js';
import { REFUSED_RECHECK_MS } from '../../stages/shared/politeness/failure-policy.js';
import type { CrawlStatus } from '../../cli/status.js';

const NXDOMAIN_SEED = 'http://gone.dead.test/';
const LOOPBACK_SEED = 'http://loopback.dead.test/page';
const REFUSING_SEED = 'http://refusing.dead.test/';
const ROBOTS_503_SEED = `http://${ROBOTS_503_HOST}/`;
/** HTTPS seeds whose certificate cannot be trusted, and the reason each must end with */
const BAD_CERT_SEEDS: Record<string, RegExp> = {
  [`https://${BAD_CERT_HOSTS.expired}/`]: /^tls_error: certificate has expired$/,
  [`https://${BAD_CERT_HOSTS.unknownCa}/`]: /^tls_error: unable to get local issuer certificate/,
  [`https://${BAD_CERT_HOSTS.wrongName}/`]: /^tls_error: certificate is not valid for this host name \(.*DNS:www\.elsewhere\.test\)$/,
  [`https://${BAD_CERT_HOSTS.incompleteChain}/`]: /^tls_error: unable to verify the first certificate \(an incomplete chain/,
};
/** self-signed, but the user said not to verify it */
const INSECURE_SEED = `https://${BAD_CERT_HOSTS.selfSigned}/`;
/**
 * short for the test (the default is an hour); the crawl's length is about this. Long enough
 * that `crawl status`, polled while the host waits, gets its turn on a loaded machine (a
 * status run starts a process and reads the output: seconds each when other tests run)
 */
const ROBOTS_GIVE_UP_MS = 40_000;
/** generous on a loaded 2-core machine: without the fix these seeds waited the whole give-up time */
const DEAD_SEED_BOUND_MS = 15_000;

/** A loopback port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a seed list with dead hosts ends cleanly', () => {
  let web: TestWeb;
  let dns: TestDns;
  let dir: string;
  before(async () => {
    web = await startTestWeb({ hosts: 2, pagesPerHost: 8, seed: 3, politeness: true, tls: true });
    // every name the test DNS server does not know answers NXDOMAIN
    dns = await startTestDns({ 'loopback.dead.test': { a: ['127.0.0.1'], ttl: 60 } });
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-dead-seeds-'));
  });
  after(async () => {
    await web?.close();
    await dns?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends; healthy hosts complete; every seed has an outcome naming what happened; dead ones within seconds', async () => {
    const out = path.join(dir, 'out');
    const healthy = web.model.siteHostNames.map((h) => `http://${h}/`);
    const args = ['run', '--out', out, '--until-idle', '--user-agent', E2E.userAgent, '--dns-server', `127.0.0.1:${dns.port}`];
    args.push('--robots-give-up-ms', String(ROBOTS_GIVE_UP_MS), '--robots-retry-ms', '3000');
    for (const rule of web.resolveRules) args.push('--resolve', rule);
    args.push('--resolve', `refusing.dead.test=127.0.0.1:${await closedPort()}`);
    args.push('--ca-file', web.tls!.caFile, '--insecure-host', BAD_CERT_HOSTS.selfSigned);
    for (const seed of [...healthy, NXDOMAIN_SEED, LOOPBACK_SEED, REFUSING_SEED, ROBOTS_503_SEED, ...Object.keys(BAD_CERT_SEEDS), INSECURE_SEED]) args.push('--seed', seed);

    const started = Date.now();
    const crawl = startCli(args, { NATS_URL: '' });

    // while it runs: status names the host waiting on its robots.txt, and when it is tried next
    let waiting: CrawlStatus['hosts'][number] | undefined;
    let table = '';
    const tableRow = new RegExp(`${ROBOTS_503_HOST.replaceAll('.', '\\.')} +\\| +\\d+ +\\| robots\\.txt unavailable +\\| \\d\\d:\\d\\d:\\d\\d UTC \\(in \\d+s\\) +\\| \\d\\d:\\d\\d:\\d\\d UTC`);
    // the table is a second `crawl status`, a moment after the first: the host may be in its next
    // robots.txt try by then (a request in flight, every --robots-retry-ms), so both are taken again
    while (!(waiting && tableRow.test(table)) && Date.now() - started < ROBOTS_GIVE_UP_MS - 3000) {
      await sleep(1500);
      const status = await runCli(['status', '--out', out, '--format', 'json'], {}, 30_000);
      if (status.code !== 0) continue; // the crawl's server is still starting
      waiting = (JSON.parse(status.stdout) as CrawlStatus).hosts.find((h) => h.host === ROBOTS_503_HOST && h.reason === 'robots.txt unavailable');
      if (waiting) table = (await runCli(['status', '--out', out], {}, 30_000)).stdout;
    }
    assert.ok(waiting, 'crawl status lists the host whose robots.txt answers 503');
    assert.ok(waiting.until !== null && waiting.givesUpAt !== null && (waiting.queued ?? 0) >= 1, JSON.stringify(waiting));
    assert.match(waiting.detail, /http 503/);
    assert.match(table, tableRow, table);
    assert.match(table, /waiting: \d+ hosts? \(.*robots\.txt unavailable: \d.*\), next try in \d+s/, table);

    const result = await crawl.done;
    assert.equal(result.code, 0, result.stderr.slice(-2000));
    assert.match(result.stderr, /TLS certificates are NOT verified for hosts matching self-signed\.badtls\.test/, 'the exemption is said at start');
    const seconds = (Date.now() - started) / 1000;

    const expected = expectedCrawl(web.model, { userAgentToken: E2E.token, maxDepth: 5, seeds: healthy, redirectHopCost: 0 });
    const stored = new Set((await storedPages(out)).urls);
    assert.deepEqual([...expected.pages.keys()].filter((u) => !stored.has(u)), [], 'the healthy hosts are complete');

    // a page's WARC record through a pipe: whole when read to the end, quiet when the reader stops early
    const get = `${shellQuote(process.execPath)} ${shellQuote(CLI)} get --out ${shellQuote(out)} --payload ${shellQuote(healthy[0]!)}`;
    const whole = spawnSync('bash', ['-c', `set -o pipefail; ${get} | (sleep 0.5; cat) | wc -c`], { encoding: 'utf8' });
    const direct = spawnSync('bash', ['-c', `${get} > ${shellQuote(path.join(dir, 'page.html'))}`], { encoding: 'utf8' });
    assert.equal(whole.status, 0, whole.stderr);
    assert.equal(direct.status, 0, direct.stderr);
    assert.equal(Number(whole.stdout.trim()), statSync(path.join(dir, 'page.html')).size, 'the pipe got the whole page');
    const early = spawnSync('bash', ['-c', `${get} | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`], { encoding: 'utf8' });
    assert.deepEqual([early.stdout.trim(), early.stderr], ['0', ''], 'a reader that stops early ends it quietly');

    const db = await openOutputDatabase(out);
    let rows: unknown[][];
    let tlsRows: unknown[][];
    let insecurePages: unknown[][];
    try {
      rows = (await db.run(`SELECT url, outcome, reason, epoch_ms(fetch_time) FROM fetch_log WHERE url IN ('${NXDOMAIN_SEED}', '${LOOPBACK_SEED}', '${REFUSING_SEED}', '${ROBOTS_503_SEED}') ORDER BY url`)).rows;
      const badSeeds = Object.keys(BAD_CERT_SEEDS).map((u) => `'${u}'`).join(', ');
      tlsRows = (await db.run(`SELECT url, outcome, reason, epoch_ms(fetch_time) FROM fetch_log WHERE url IN (${badSeeds}) ORDER BY url`)).rows;
      insecurePages = (await db.run(`SELECT url FROM pages WHERE url LIKE 'https://${BAD_CERT_HOSTS.selfSigned}/%' ORDER BY url`)).rows;
    } finally {
      await db.close();
    }
    // the certificates that cannot be trusted: one row each, the reason, within seconds
    assert.equal(tlsRows.length, Object.keys(BAD_CERT_SEEDS).length, `one row per bad-certificate seed: ${JSON.stringify(tlsRows)}`);
    for (const [url, outcome, reason, at] of tlsRows) {
      assert.equal(outcome, 'network_error', String(url));
      assert.match(String(reason), BAD_CERT_SEEDS[String(url)]!, String(url));
      assert.ok(Number(at) - started < DEAD_SEED_BOUND_MS, `${String(url)} ended ${Number(at) - started} ms after the start`);
    }
    console.log(`bad-certificate seeds ended ${tlsRows.map((r) => Number(r[3]) - started).join(', ')} ms after the start`);
    // the exempted host is crawled, and every record of it says it was not verified
    assert.deepEqual(insecurePages.map((r) => String(r[0])), [INSECURE_SEED, `${INSECURE_SEED}next`]);
    const records = (await Promise.all(warcFiles(out).map(readWarcFile))).flat().filter((r) => r.uri?.startsWith(INSECURE_SEED));
    const notes = records.filter((r) => r.type === 'metadata').map((r) => Buffer.from(r.payload).toString());
    assert.ok(notes.length >= 3 && notes.every((n) => n.includes('tlsCertificate: certificate not verified (--insecure-host): self-signed certificate')), notes.join('\n---\n'));
    const response = records.find((r) => r.type === 'response' && r.uri === INSECURE_SEED);
    assert.match(response?.headers.get('warc-protocol') ?? '', /^h2, tls\/1\.[23]$/, 'fetched over HTTP/2');
    assert.ok(web.requestLog().filter((r) => r.host === BAD_CERT_HOSTS.selfSigned).every((r) => r.protocol === 'h2' && r.tls));
    const bySeed = new Map(rows.map((r) => [String(r[0]), { outcome: String(r[1]), reason: String(r[2]), at: Number(r[3]) }]));
    assert.equal(rows.length, 4, `one row per dead seed: ${JSON.stringify(rows)}`);
    assert.deepEqual(bySeed.get(NXDOMAIN_SEED)!.outcome, 'network_error');
    assert.match(bySeed.get(NXDOMAIN_SEED)!.reason, /^dns_error: ENOTFOUND gone\.dead\.test/);
    assert.equal(bySeed.get(LOOPBACK_SEED)!.outcome, 'refused');
    assert.match(bySeed.get(LOOPBACK_SEED)!.reason, /^refused: .*127\.0\.0\.1: loopback address/);
    // refused on its robots.txt twice, a few seconds apart: nothing listens there, it ends then
    assert.equal(bySeed.get(REFUSING_SEED)!.outcome, 'network_error');
    assert.match(bySeed.get(REFUSING_SEED)!.reason, /^connection_refused: connect ECONNREFUSED 127\.0\.0\.1:\d+ \(refused twice, \d+ s apart\)$/);
    assert.equal(bySeed.get(ROBOTS_503_SEED)!.outcome, 'robots_disallowed');
    assert.match(bySeed.get(ROBOTS_503_SEED)!.reason, /robots\.txt unavailable for \d+ s, giving up: http 503/);

    const nxdomainMs = bySeed.get(NXDOMAIN_SEED)!.at - started;
    const loopbackMs = bySeed.get(LOOPBACK_SEED)!.at - started;
    const refusingMs = bySeed.get(REFUSING_SEED)!.at - started;
    console.log(`dead seeds ended ${nxdomainMs} ms (NXDOMAIN), ${loopbackMs} ms (loopback) and ${refusingMs} ms (refused) after the start; the crawl took ${seconds.toFixed(1)} s`);
    assert.ok(nxdomainMs < DEAD_SEED_BOUND_MS && loopbackMs < DEAD_SEED_BOUND_MS, `within ${DEAD_SEED_BOUND_MS} ms of the start`);
    assert.ok(refusingMs < DEAD_SEED_BOUND_MS + REFUSED_RECHECK_MS, `the refused seed within ${DEAD_SEED_BOUND_MS + REFUSED_RECHECK_MS} ms of the start (its second try)`);
    assert.ok(bySeed.get(ROBOTS_503_SEED)!.at - started >= ROBOTS_GIVE_UP_MS, 'the 503 host was given up on only after the give-up time');
  });
});
