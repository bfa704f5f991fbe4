/**
 * `npm run bench:floor`: the least CPU a bench page can cost on this machine, whatever the
 * crawler does around it, and so the most pages/s any crawler built on these parts could
 * reach here. `npm run bench` reports what the crawler achieves; this says how far that is
 * from the ceiling.
 *
 * Each part is work no design can skip for a stored page, given the parts the product is
 * built from, run on its own over the pages of `npm run bench` (same test web, seed and
 * hosts) and timed by CPU (every thread of this process, plus nats-server's):
 * - the test web serving the page and undici fetching it over loopback (both run on this
 *   machine in the bench, so both count);
 * - parse5 parsing it (no tree walk, no text, no links);
 * - JetStream carrying it once: one publish with its ack, one delivery, one ack, into a file
 *   stream (the crawler carries each page on three: fetched, extracted, results);
 * - its WARC response record gzipped (nothing else of the archive);
 * - a row with its text appended through DuckDB and written to a Parquet file.
 * Left out, though the crawler must do them: the URL's way through normalize, seen-filter and
 * the gate, every KV read and write, link extraction, SimHash, the WARC request and metadata
 * records, the links and fetch_log tables. So the real cost is above this sum, and the
 * ceiling printed is above what any implementation could reach.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import zlib from 'node:zlib';
import { Agent, request } from 'undici';
import { parse } from 'parse5';
import { DuckDBInstance } from '@duckdb/node-api';
import { jetstream, jetstreamManager, AckPolicy } from '@nats-io/jetstream';
import { startTestWeb } from '../testweb/index.js';
import { startEmbeddedServer } from '../ops/nats/embedded-server.js';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { cpuSeconds } from './proc-stats.js';
import { baseHeaders, newRecordId, warcRecordBytes } from '../stages/archive/warc-record.js';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 40);
const PAGES_PER_HOST = Number(process.env.BENCH_PAGES_PER_HOST ?? 55);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TARGET = Number(process.env.BENCH_TARGET ?? 300);
const IN_FLIGHT = 64;

interface Page {
  url: string;
  body: Buffer;
}

/** CPU milliseconds of this process (all its threads) spent in `work`, plus `otherPid`'s if given. */
async function cpuMs(work: () => Promise<void>, otherPid?: number): Promise<number> {
  const other0 = otherPid ? cpuSeconds(otherPid) ?? 0 : 0;
  const start = process.cpuUsage();
  await work();
  const used = process.cpuUsage(start);
  const other = otherPid ? (cpuSeconds(otherPid) ?? other0) - other0 : 0;
  return (used.user + used.system) / 1000 + other * 1000;
}

/** Runs `each` over `items` with up to `limit` at once. */
async function eachLimited<T>(items: readonly T[], limit: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
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

async function parseAll(pages: Page[]): Promise<void> {
  const decoder = new TextDecoder();
  for (const p of pages) parse(decoder.decode(p.body));
}

/** The response record only, built by the archive's own code; digests left out (not gzip's cost). */
async function gzipRecords(pages: Page[]): Promise<void> {
  const httpHead = Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n');
  for (const p of pages) {
    const record = warcRecordBytes(baseHeaders('response', newRecordId(), Date.now(), p.url, null), [httpHead, p.body]);
    zlib.gzipSync(record);
  }
}

async function writeParquet(pages: Page[], dir: string, run: number): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    await conn.run('CREATE TABLE pages (url VARCHAR, text VARCHAR)');
    const appender = await conn.createAppender('pages');
    const decoder = new TextDecoder();
    for (const p of pages) {
      appender.appendVarchar(p.url);
      appender.appendVarchar(decoder.decode(p.body));
      appender.endRow();
    }
    appender.closeSync();
    await conn.run(`COPY pages TO '${path.join(dir, `pages-${run}.parquet`)}' (FORMAT parquet, COMPRESSION zstd)`);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** Every page published once (ack awaited) to a file stream, then consumed and acked once. */
async function throughJetStream(natsUrl: string, pages: Page[], run: number): Promise<void> {
  const nc = await connectNats(natsUrl, 'throughput-floor');
  try {
    const jsm = await jetstreamManager(nc);
    const stream = `FLOOR_${run}`;
    await jsm.streams.add({ name: stream, subjects: [`floor.${run}.*`] });
    await jsm.consumers.add(stream, { durable_name: 'reader', ack_policy: AckPolicy.Explicit });
    const js = jetstream(nc);
    await eachLimited(pages, IN_FLIGHT, async (p) => {
      await js.publish(`floor.${run}.${p.body.length % 16}`, p.body);
    });
    const consumer = await js.consumers.get(stream, 'reader');
    const messages = await consumer.consume({ max_messages: IN_FLIGHT * 2 });
    let received = 0;
    for await (const m of messages) {
      m.ack();
      if (++received === pages.length) break;
    }
    await jsm.streams.delete(stream);
  } finally {
    await nc.drain();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const web = await startTestWeb({ hosts: 1, benchHosts: HOSTS, benchPagesPerHost: PAGES_PER_HOST, seed: 7 });
  const urls = web.model.benchHostNames.flatMap((host) => [...web.model.byName.get(host)!.resources.keys()].map((p) => `http://${host}${p}`));
  const dir = mkdtempSync(path.join(os.tmpdir(), 'throughput-floor-'));
  const nats = await startEmbeddedServer(path.join(dir, 'nats'));
  const costs: Record<string, number[]> = { fetch: [], parse: [], jetstream: [], gzip: [], parquet: [] };
  let pages: Page[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const fetched: Page[] = [];
      costs.fetch!.push(await cpuMs(() => serveAndFetch(web.port, urls, fetched)));
      pages = fetched;
      costs.parse!.push(await cpuMs(() => parseAll(pages)));
      costs.jetstream!.push(await cpuMs(() => throughJetStream(nats.url, pages, run), nats.pid));
      costs.gzip!.push(await cpuMs(() => gzipRecords(pages)));
      costs.parquet!.push(await cpuMs(() => writeParquet(pages, dir, run)));
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
    ['JetStream carries it once (client + nats-server)', median(costs.jetstream!) / n],
    ['its WARC response record is gzipped', median(costs.gzip!) / n],
    ['its text goes to Parquet through DuckDB', median(costs.parquet!) / n],
  ];
  const total = rows.reduce((s, [, ms]) => s + ms, 0);
  const cores = os.availableParallelism();
  console.log(`\n${n} bench pages of ${kb.toFixed(1)} KB; CPU ms per page, median of ${RUNS} runs\n`);
  console.log('| unavoidable work per page | CPU ms |');
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
