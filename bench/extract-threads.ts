/**
 * `node dist/bench/extract-threads.js`: what extract costs the main thread, inline and in a
 * worker pool. Test-web pages go through the extract stage as the runner calls it (decode,
 * then handle, CONCURRENCY at once); prints pages/s and the main thread's busy time per page
 * (event-loop utilization × wall time), which is what `--extract-threads` takes off it.
 */
import { performance } from 'node:perf_hooks';
import { createExtractStage } from '../stages/extract/index.js';
import { encodeFetched } from '../schemas/index.js';
import { renderPage } from '../testweb/render-page.js';
import { buildSiteModel } from '../testweb/site-model.js';
import type { HtmlResource } from '../testweb/model-types.js';
import type { ConsumerStage } from '../pipeline/stage.js';
import { createFakeContext } from './support/memory-context.js';

const PAGES = Number(process.env.PAGES ?? 2000);
const THREADS = (process.env.THREADS ?? '0,1,2').split(',').map(Number);

function fetchedPages(): Uint8Array[] {
  const model = buildSiteModel({ hosts: 0, benchHosts: 40, benchPagesPerHost: 55, seed: 7 });
  const out: Uint8Array[] = [];
  for (const host of model.hosts) {
    for (const page of [...host.resources.values()].filter((r): r is HtmlResource => r.kind === 'html')) {
      const url = `http://${host.name}${page.path}`;
      const body = new TextEncoder().encode(renderPage(host.name, page));
      const common = { v: 1, fetch_id: `f${out.length}`, url, host: host.name, domain: host.name, depth: 1, fetch_time: Date.now() } as const;
      out.push(encodeFetched({ ...common, fetch_status: 200, duration_ms: 1, content_type: 'text/html', charset: 'utf-8', headers: {}, body, truncated: false }));
    }
  }
  return out;
}

async function run(def: ConsumerStage<any>, pages: Uint8Array[], concurrency: number) {
  const ctx = createFakeContext();
  let next = 0;
  const worker = async () => {
    while (next < pages.length) {
      const data = pages[next++ % pages.length]!;
      const outcome = await def.handle({ subject: 'crawl.fetched.0', message: def.decode('crawl.fetched.0', data), deliveryCount: 1, streamSeq: 1 }, ctx);
      if (outcome.kind !== 'emit') throw new Error(`unexpected ${outcome.kind}`);
    }
  };
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  return { perSecond: (1000 * pages.length) / wall, mainMsPerPage: (elu.utilization * wall) / pages.length };
}

async function main() {
  const all = fetchedPages();
  const pages = Array.from({ length: PAGES }, (_, i) => all[i % all.length]!);
  const avgKb = pages.reduce((a, p) => a + p.length, 0) / pages.length / 1024;
  console.log(`${pages.length} pages of the bench web, ${avgKb.toFixed(1)} KiB each on average`);
  console.log('| extract threads | pages/s | main thread busy per page (ms) |\n|---|---|---|');
  for (const threads of THREADS) {
    const def = createExtractStage({ threads });
    await run(def, pages.slice(0, 200), def.defaultConcurrency); // warm-up (JIT, worker start-up)
    const r = await run(def, pages, def.defaultConcurrency);
    await def.close?.(createFakeContext());
    console.log(`| ${threads} | ${r.perSecond.toFixed(0)} | ${r.mainMsPerPage.toFixed(2)} |`);
  }
}

void main();
