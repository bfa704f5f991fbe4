// node crawl.js --seed URL --topic WORDS --budget N --out DIR [--resolve PATTERN=ADDRESS] [--min-delay-ms N]:
// a crawl that follows no links by itself (followLinks: false): only the scorer's picks are crawled.
import { parseArgs } from 'node:util';
import { startCrawl, query } from 'jetstream-crawler';
import { topicScorer } from './scorer.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', multiple: true, default: [] },
    topic: { type: 'string', default: 'astronomy' },
    budget: { type: 'string', default: '100' },
    out: { type: 'string', default: 'crawl-output' },
    resolve: { type: 'string', multiple: true, default: [] },
    'min-delay-ms': { type: 'string', default: '1000' },
  },
});

await startCrawl({
  seeds: values.seed,
  out: values.out,
  resolve: values.resolve,
  minDelayMs: Number(values['min-delay-ms']),
  followLinks: false,
  sitemaps: false,
  stages: [topicScorer({ topic: values.topic, budget: Number(values.budget) })],
});
const pages = await query(values.out, 'SELECT url, title FROM pages ORDER BY url');
process.stdout.write(JSON.stringify(pages, null, 2) + '\n');
