/**
 * `npm run bench:floor`: the least CPU a bench page can cost on this machine in a crawler of
 * DESIGN.md's shape, whatever the stages do around it, and so the most pages/s such a crawler
 * could reach here. `npm run bench` reports what the crawler achieves; this says how far that
 * is from the ceiling.
 *
 * Each part is work the design cannot skip for a stored page, run on its own over the pages
 * of `npm run bench` (same test web, seed and hosts) and timed by CPU (every thread of this
 * process, plus nats-server's where it takes part):
 * - the test web serving the page and undici fetching it over loopback (both run on this
 *   machine in the bench, so both count);
 * - parse5 parsing it;
 * - a minimal walk of the tree for its visible text and links (the text and links columns);
 * - its SimHash and content digest, by the crawler's own functions;
 * - its WARC response record gzipped (nothing else of the archive);
 * - its rows appended through DuckDB and written to Parquet: the page's URL and text, its
 *   links, its fetch_log row (the three tables, with none of their other columns);
 * - the dataflow's seven edges carrying it, ack after publish, and the three KV writes
 *   politeness and near-duplicate detection need at least (floor-dataflow.ts).
 * Left out, though the crawler must do them: normalizing the URL, the seen set, robots,
 * every KV read, all extraction beyond text and hrefs, message encoding, the WARC request and
 * metadata records, the per-host queues. So the real cost is above this sum, and
 * the ceiling printed is above what any implementation could reach.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import zlib from 'node:zlib';
import { Agent, request } from 'undici';
import { parse, type DefaultTreeAdapterMap } from 'parse5';
import { DuckDBInstance } from '@duckdb/node-api';
import { startTestWeb } from '../testweb/index.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { cpuSeconds } from './proc-stats.js';
import { baseHeaders, newRecordId, warcRecordBytes } from '../stages/archive/warc-record.js';
import { simhash64 } from '../stages/shared/content-identity/simhash.js';
import { contentDigest } from '../stages/shared/content-identity/content-digest.js';
import { kvWrites, throughEdges, type FloorPage } from './floor-dataflow.js';
import { eachLimited, median } from './stats.js';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 40);
const PAGES_PER_HOST = Number(process.env.BENCH_PAGES_PER_HOST ?? 55);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TARGET = Number(process.env.BENCH_TARGET ?? 300);
const IN_FLIGHT = 64;

type Page = FloorPage;

/** CPU milliseconds this process (all its threads) has used so far. */
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** CPU milliseconds of this process (all its threads) spent in `work`, plus `otherPid`'s if given. */
async function cpuMs(work: () => Promise<void>, otherPid?: number): Promise<number> {
  const other0 = otherPid ? cpuSeconds(otherPid) ?? 0 : 0;
  const start = cpuNow();
  await work();
  const other = otherPid ? (cpuSeconds(otherPid) ?? other0) - other0 : 0;
  return cpuNow() - start + other * 1000;
}

async function serveAndFetch(port: number, urls: string[], pages: Page[]): Promise<void> {
  const agent = new Agent({ connections: IN_FLIGHT, pipelining: 1 });
  try {
    await eachLimited(urls, IN_FLIGHT, async (url) => {
      const u = new URL(url);
      const res = await request(`http://127.0.0.1:${port}${u.pathname}`, { dispatcher: agent, headers: { host: u.host } });
      const body = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200) throw new Error(`${url}: HTTP ${res.statusCode}`);
      pages.push({ url, body });
    });
  } finally {
    await agent.close();
  }
}

type Document = DefaultTreeAdapterMap['document'];
type Node = DefaultTreeAdapterMap['node'];

/**
 * Parses each page and walks its tree at once, the tree then dropped as the crawler drops
 * it (holding every page's tree would put the cost of collecting them all on the parse),
 * and returns the CPU ms of each step, all threads of this process.
 */
function parseAndWalk(pages: Page[], extracted: Extracted[]): { parse: number; walk: number } {
  const decoder = new TextDecoder();
  const spent = { parse: 0, walk: 0 };
  for (const p of pages) {
    const t0 = cpuNow();
    const tree = parse(decoder.decode(p.body));
    const t1 = cpuNow();
    extracted.push(visibleTextAndLinks(tree, p.url));
    spent.parse += t1 - t0;
    spent.walk += cpuNow() - t1;
  }
  return spent;
}

const HIDDEN = new Set(['script', 'style', 'template', 'noscript']);

/**
 * The least the `pages.text` and `links` columns need from a tree: its visible text, and
 * every `a[href]` resolved to an absolute URL. (Whitespace is left as the page has it; no
 * anchor text, rel, title, canonical, meta robots, language, main text or `<base>`: the
 * crawler does all of those on top.) Most of its cost is joining the text: parse5 builds a
 * text node by appending every token to it, and the joined string copies those pieces.
 */
interface Extracted {
  text: string;
  links: string[];
}

function visibleTextAndLinks(doc: Document, base: string): Extracted {
  const parts: string[] = [];
  const links: string[] = [];
  const stack: Node[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.nodeName === '#text') {
      parts.push((node as DefaultTreeAdapterMap['textNode']).value);
      continue;
    }
    if (!('childNodes' in node)) continue;
    if ('tagName' in node) {
      if (HIDDEN.has(node.tagName)) continue;
      const href = node.tagName === 'a' ? node.attrs.find((a) => a.name === 'href') : undefined;
      if (href) {
        try {
          links.push(new URL(href.value, base).href);
        } catch {
          // not a URL: skipped, as the crawler does
        }
      }
    }
    for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i]!);
  }
  return { text: parts.join(' '), links };
}

/** The pages.simhash and content_digest columns: the crawler's own functions. */
async function fingerprintAll(pages: Page[], extracted: Extracted[]): Promise<void> {
  for (const [i, { text }] of extracted.entries()) {
    simhash64(text);
    contentDigest(pages[i]!.body);
  }
}

/** The response record only, built by the archive's own code; digests left out (not gzip's cost). */
async function gzipRecords(pages: Page[]): Promise<void> {
  const httpHead = Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n');
  for (const p of pages) {
    const record = warcRecordBytes(baseHeaders('response', newRecordId(), Date.now(), p.url, null), [httpHead, p.body]);
    zlib.gzipSync(record);
  }
}

/** The three tables issue 2 asks for, at their least: a page row with its text, a row per link, a fetch_log row. */
async function writeParquet(pages: Page[], extracted: Extracted[], dir: string, run: number): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    await conn.run('CREATE TABLE pages (url VARCHAR, text VARCHAR)');
    await conn.run('CREATE TABLE links (src_url VARCHAR, dst_url VARCHAR)');
    await conn.run('CREATE TABLE fetch_log (url VARCHAR, outcome VARCHAR, fetch_status INTEGER)');
    const pageRows = await conn.createAppender('pages');
    const linkRows = await conn.createAppender('links');
    const logRows = await conn.createAppender('fetch_log');
    for (const [i, p] of pages.entries()) {
      pageRows.appendVarchar(p.url);
      pageRows.appendVarchar(extracted[i]!.text);
      pageRows.endRow();
      for (const dst of extracted[i]!.links) {
        linkRows.appendVarchar(p.url);
        linkRows.appendVarchar(dst);
        linkRows.endRow();
      }
      logRows.appendVarchar(p.url);
      logRows.appendVarchar('fetched');
      logRows.appendInteger(200);
      logRows.endRow();
    }
    for (const rows of [pageRows, linkRows, logRows]) rows.closeSync();
    for (const table of ['pages', 'links', 'fetch_log']) {
      await conn.run(`COPY ${table} TO '${path.join(dir, `${table}-${run}.parquet`)}' (FORMAT parquet, COMPRESSION zstd)`);
    }
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}


async function main(): Promise<void> {
  const web = await startTestWeb({ hosts: 1, benchHosts: HOSTS, benchPagesPerHost: PAGES_PER_HOST, seed: 7 });
  const urls = web.model.benchHostNames.flatMap((host) => [...web.model.byName.get(host)!.resources.keys()].map((p) => `http://${host}${p}`));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'throughput-floor-'));
  const nats = await startEmbeddedServer(path.join(dir, 'nats'));
  const costs: Record<string, number[]> = { fetch: [], parse: [], walk: [], fingerprint: [], gzip: [], parquet: [], edges: [], kv: [] };
  let pages: Page[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const fetched: Page[] = [];
      costs.fetch!.push(await cpuMs(() => serveAndFetch(web.port, urls, fetched)));
      pages = fetched;
      const extracted: Extracted[] = [];
      const spent = parseAndWalk(pages, extracted);
      costs.parse!.push(spent.parse);
      costs.walk!.push(spent.walk);
      costs.fingerprint!.push(await cpuMs(() => fingerprintAll(pages, extracted)));
      costs.gzip!.push(await cpuMs(() => gzipRecords(pages)));
      costs.parquet!.push(await cpuMs(() => writeParquet(pages, extracted, dir, run)));
      costs.edges!.push(await cpuMs(() => throughEdges(nats.url, pages, run, IN_FLIGHT), nats.pid));
      costs.kv!.push(await cpuMs(() => kvWrites(nats.url, pages, run, IN_FLIGHT), nats.pid));
      process.stdout.write(`run ${run + 1} of ${RUNS}: ${pages.length} pages\n`);
    }
  } finally {
    await nats.stop();
    await web.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const n = pages.length;
  const kb = pages.reduce((s, p) => s + p.body.length, 0) / n / 1024;
  const rows: Array<[string, number]> = [
    ['test web serves it, undici fetches it (loopback)', median(costs.fetch!) / n],
    ['parse5 parses it', median(costs.parse!) / n],
    ['its visible text and a[href] links are taken from the tree (a minimal walk)', median(costs.walk!) / n],
    ['SimHash of its text, SHA-1 of its body (the crawler\'s functions)', median(costs.fingerprint!) / n],
    ['its WARC response record is gzipped', median(costs.gzip!) / n],
    ['its rows go to Parquet through DuckDB: pages (url, text), links, fetch_log', median(costs.parquet!) / n],
    ['seven stream edges carry it, ack after publish (client + nats-server)', median(costs.edges!) / n],
    ['three KV writes: the gate takes and frees its host, simhash stores it (client + nats-server)', median(costs.kv!) / n],
  ];
  const total = rows.reduce((s, [, ms]) => s + ms, 0);
  const cores = os.availableParallelism();
  console.log(`\n${n} bench pages of ${kb.toFixed(1)} KB; CPU ms per page, median of ${RUNS} runs\n`);
  console.log('| least work per page | CPU ms |');
  console.log('|---|---|');
  for (const [name, ms] of rows) console.log(`| ${name} | ${ms.toFixed(2)} |`);
  console.log(`| **sum: the floor** | **${total.toFixed(2)}** |`);
  console.log(`\n| on this machine | |`);
  console.log('|---|---|');
  console.log(`| cores | ${cores} |`);
  console.log(`| ceiling: cores × 1000 / floor | ${((cores * 1000) / total).toFixed(0)} pages/s |`);
  console.log(`| CPU per page a target of ${TARGET} pages/s allows | ${((cores * 1000) / TARGET).toFixed(2)} ms |`);
}

await main();
