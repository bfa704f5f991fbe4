// Bench hosts (b000.bench.test ...): plain, fast, fully crawlable sites for throughput tests.
// No robots restrictions, no crawl-delay, no traps; a fan-out tree keeps every page within
// depth 3 of "/", random extra links add realistic duplicates-of-discovery, and each page
// links to other bench hosts' "/" so a crawl spreads across hosts.

import { deriveSeed, mulberry32, pick, randInt } from './prng.js';
import { buildRobotsSpec } from './robots-rules.js';
import { phrase } from './words.js';
import type { HostModel, HtmlResource, PageLink, Resource } from './model-types.js';

export function buildBenchHost(index: number, name: string, allBenchHosts: string[], seed: number, pageCount: number): HostModel {
  const rng = mulberry32(deriveSeed(seed, 'bench', name));
  const n = Math.max(1, pageCount);
  // Fan-out f with 1 + f + f^2 + f^3 >= n: every page within depth 3 of "/".
  let fanout = 8;
  while (1 + fanout + fanout * fanout + fanout ** 3 < n) fanout++;
  const keys = Array.from({ length: n }, (_, k) => (k === 0 ? '/' : `/p/${k}.html`));
  const resources = new Map<string, Resource>();
  const otherRoots = allBenchHosts.filter((h) => h !== name);
  for (let k = 0; k < n; k++) {
    const links: PageLink[] = [];
    if (k !== 0) links.push({ href: '/', text: 'Home', area: 'nav' });
    for (let c = k * fanout + 1; c <= k * fanout + fanout && c < n; c++) links.push({ href: keys[c] as string, text: phrase(rng, 'en', 2, 4), area: 'related' });
    const extras = randInt(rng, 2, 4);
    for (let e = 0; e < extras && n > 1; e++) links.push({ href: keys[randInt(rng, 0, n - 1)] as string, text: phrase(rng, 'en', 2, 4), area: 'inline' });
    const cross = Math.min(otherRoots.length, randInt(rng, 1, 2));
    for (let e = 0; e < cross; e++) links.push({ href: `http://${pick(rng, otherRoots)}/`, text: phrase(rng, 'en', 2, 4), area: 'related' });
    const res: HtmlResource = {
      kind: 'html',
      status: 200,
      path: keys[k] as string,
      role: 'bench',
      lang: 'en',
      title: phrase(rng, 'en', 3, 6),
      description: `${phrase(rng, 'en', 10, 16)}.`,
      links,
      textSeed: deriveSeed(seed, 'bench-text', name, k),
      wordChanges: 0,
      structuredData: false,
      depthFromHostRoot: null,
    };
    resources.set(res.path, res);
  }
  return { name, index, group: 'bench', lang: 'en', robots: buildRobotsSpec(name, 'bench'), resources, brokenLinkPaths: [] };
}
