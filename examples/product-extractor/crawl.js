// node crawl.js --seed URL --out DIR [--resolve PATTERN=ADDRESS] [--min-delay-ms N]:
// crawls with the products stage in the same process, then prints what it found.
import { parseArgs } from 'node:util';
import { startCrawl, query } from 'jetstream-crawler';
import products from './products.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', multiple: true, default: [] },
    out: { type: 'string', default: 'crawl-output' },
    resolve: { type: 'string', multiple: true, default: [] },
    'min-delay-ms': { type: 'string', default: '1000' },
    'max-depth': { type: 'string', default: '3' },
  },
});

await startCrawl({
  seeds: values.seed,
  out: values.out,
  resolve: values.resolve,
  minDelayMs: Number(values['min-delay-ms']),
  maxDepth: Number(values['max-depth']),
  stages: [products],
});
const rows = await query(values.out, 'SELECT name, price, currency, availability, source_url FROM products ORDER BY name');
process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
