/**
 * `npm run bench:inputs`: what one page costs the pure functions of the extract and fetch
 * stages, and that hostile input costs about what plain input of its size does.
 *
 * - extractHtml on a ~25 KB article page beside a bare parse5 parse of it (interleaved, so the
 *   extraction's overhead over parsing reads off even on a noisy machine), and simhash64 on the
 *   text of such a page: medians of 200 runs.
 * - 200 KB hostile HTML (nesting, unclosed tags, adoption-agency cases) through extractHtml:
 *   each under 2 s, or 20 times a plain 200 KB page timed in the same run when the machine is
 *   slower than that allows (a loaded machine slows both alike; a quadratic case is slower by
 *   far more than 20 times).
 * - harvestPdfLinks on 20 MB of random bytes and on hostile PDFs (unclosed strings, streams
 *   without end, deflate bombs): each under 3 s.
 *
 * A bound broken is printed and sets the exit code, so a run says at once whether a change made
 * some input cost what it should not. Timing bounds live here, not in the unit tests: those run
 * beside three other suites on a shared machine and check what the functions return.
 */
import { parse } from 'parse5';
import { extractHtml } from '../stages/extract/extract-html.js';
import { harvestPdfLinks } from '../stages/fetch/pdf-links.js';
import { simhash64 } from '../stages/shared/content-identity/simhash.js';
import { mulberry32 } from '../testweb/prng.js';
import { hostilePdfShapes, randomBytes } from './support/pdf-samples.js';

const failures: string[] = [];

function timed<T>(f: () => T): { value: T; ms: number } {
  const t = performance.now();
  const value = f();
  return { value, ms: performance.now() - t };
}

/** The median and p90 of `runs` timings of `f`, after 50 to warm up. */
function timings(f: () => void, runs = 200): { median: number; p90: number; min: number } {
  for (let i = 0; i < 50; i++) f();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(timed(f).ms);
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(runs / 2)]!, p90: times[Math.floor(runs * 0.9)]!, min: times[0]! };
}

/** A realistic-ish article page: head metadata, nav, article paragraphs, footer, inline script. */
function samplePage(targetBytes: number): string {
  const rnd = mulberry32(7);
  const vocab = ['the', 'crawler', 'fetches', 'pages', 'and', 'extracts', 'links', 'from', 'html', 'documents',
    'quickly', 'with', 'politeness', 'per', 'host', 'queue', 'stream', 'message', 'durable', 'consumer'];
  const sentence = (n: number) => Array.from({ length: n }, () => vocab[Math.floor(rnd() * vocab.length)]).join(' ');
  let html = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sample article page</title>' +
    '<meta name="description" content="A sample page"><link rel="canonical" href="/article">' +
    '<style>body{font:14px sans-serif}.nav a{color:#333}</style>' +
    '<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}</script></head>' +
    '<body><header class="site-header"><nav class="nav"><ul>';
  for (let i = 0; i < 30; i++) html += `<li class="nav-item"><a href="/section/${i}" class="nav-link">Section ${i}</a></li>`;
  html += '</ul></nav></header><main><article><h1>Sample article</h1>';
  let i = 0;
  while (html.length < targetBytes - 1500) {
    html += `<h2 id="h${i}">${sentence(4)}</h2><p class="para">${sentence(25)} <a href="/article/${i}?ref=body">${sentence(3)}</a> ` +
      `${sentence(20)} <em>${sentence(2)}</em> ${sentence(15)}.</p>\n`;
    i++;
  }
  html += '</article></main><footer><p>&copy; 2024 Example</p><a href="https://twitter.com/x" rel="nofollow noopener">t</a></footer>' +
    '<script>gtag("js", new Date());</script></body></html>';
  return html;
}

/** Words of a fixed made-up vocabulary, some far more frequent than others (as in prose). */
function randomText(seed: number, bytes: number): string {
  const rnd = mulberry32(seed);
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'an', 'or', 'el', 'ux', 'py', 'qo', 'di'];
  const vocab = Array.from({ length: 2000 }, () => Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => syllables[Math.floor(rnd() * syllables.length)]).join(''));
  const words: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = vocab[Math.floor(vocab.length * rnd() ** 2)]!;
    words.push(w);
    n += w.length + 1;
  }
  return words.join(' ').slice(0, bytes);
}

function pageCosts(): void {
  const url = 'https://example.com/article';
  const html = samplePage(25_000);
  const links = extractHtml(html, url).links.length;
  // interleaved: each extraction is followed by a bare parse of the same page
  const extractTimes: number[] = [];
  const parseTimes: number[] = [];
  for (let i = 0; i < 50; i++) (extractHtml(html, url), parse(html));
  for (let i = 0; i < 200; i++) {
    extractTimes.push(timed(() => extractHtml(html, url)).ms);
    parseTimes.push(timed(() => parse(html)).ms);
  }
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[100]!;
  console.log(`extractHtml: ${(html.length / 1024).toFixed(1)} KB page, ${links} links: median ${med(extractTimes).toFixed(3)} ms (min ${extractTimes[0]!.toFixed(3)}, p90 ${extractTimes[180]!.toFixed(3)}); bare parse5 median ${med(parseTimes).toFixed(3)} ms`);
  const text = randomText(77, 25_000);
  const s = timings(() => simhash64(text));
  console.log(`simhash64: ${(text.length / 1024).toFixed(1)} KB text: median ${s.median.toFixed(3)} ms, p90 ${s.p90.toFixed(3)} ms over 200 runs`);
}

function hostileHtml(): void {
  const TARGET = 200 * 1024;
  const url = 'https://example.com/hostile';
  const plain = `<html><body>${'<p>Plain words in a paragraph, <a href="/x">a link</a>.</p>'.repeat(3500)}</body></html>`.slice(0, TARGET);
  const plainMs = () => [0, 1, 2].map(() => timed(() => extractHtml(plain, url)).ms).sort((a, b) => a - b)[1]!;
  const shapes: Array<[string, (n: number) => string]> = [
    ['nested divs', (n) => '<div>'.repeat(n)],
    ['unclosed links', (n) => '<a href="/x">'.repeat(n)],
    ['links in svg', (n) => '<svg><a href="/y">'.repeat(n)],
    ['nested tables', (n) => '<table><tr><td>'.repeat(n)],
    ['links in noscript', (n) => '<noscript><a href="/z">x</a></noscript>'.repeat(n)],
    ['one link, many children', (n) => '<a href="/a">' + '<b>x</b>'.repeat(n) + '</a>'],
    ['ampersands', (n) => '&'.repeat(n * 4)],
    ['less-than signs', (n) => '<'.repeat(n * 4)],
    ['comment openers', (n) => '<!--'.repeat(n)],
    ['an unclosed attribute', (n) => `<p title="${'x'.repeat(n * 4)}`],
    ['an unclosed script', (n) => '<script>' + 'x'.repeat(n * 4)],
    ['distinct unclosed links', (n) => Array.from({ length: n }, (_, i) => `<a href="/n${i}">`).join('')],
    ['nested selects', (n) => '<select><option>'.repeat(n)],
    ['formatting elements', (n) => '<font><b><i><u>'.repeat(n)],
    ['formatting elements with text', (n) => '<font><b><i><u>x'.repeat(n)],
    ['links foster-parented out of tables', (n) => '<table><a href="/q">x'.repeat(n)],
    ['misnested formatting around links', (n) => '<b><i><a href=/r>x</b></i>'.repeat(n)],
    ['links in noscript in svg', (n) => '<svg><noscript><a href=/q>'.repeat(n)],
    ['nested templates', (n) => '<template>'.repeat(n)],
    ['nested divs with links', (n) => '<div><a href="/x">t'.repeat(n)],
    ['repeated robots meta and base', (n) => `<meta name=robots content=none><base href="//[::1]/">`.repeat(n)],
  ];
  let limitMs = Math.max(2000, 20 * plainMs());
  let worst = 0;
  for (const [name, make] of shapes) {
    const body = make(Math.ceil(TARGET / 16)).slice(0, TARGET);
    let { ms } = timed(() => extractHtml(body, url));
    if (ms >= limitMs) {
      // the machine may have slowed since the plain page was timed: time both again once
      limitMs = Math.max(2000, 20 * plainMs());
      ({ ms } = timed(() => extractHtml(body, url)));
    }
    worst = Math.max(worst, ms);
    if (ms >= limitMs) failures.push(`extractHtml, 200 KB of ${name}: ${Math.round(ms)} ms (limit ${Math.round(limitMs)} ms)`);
  }
  console.log(`extractHtml on 200 KB hostile documents: ${shapes.length} shapes, the slowest ${worst.toFixed(0)} ms (limit ${Math.round(limitMs)} ms)`);
}


function hostilePdfs(): void {
  const LIMIT_MS = 3000;
  const shapes: Array<[string, Uint8Array]> = [['20 MB of random bytes', randomBytes(20 * 1024 * 1024, 42)], ...hostilePdfShapes()];
  let worst = 0;
  for (const [name, input] of shapes) {
    const { ms } = timed(() => harvestPdfLinks(input));
    worst = Math.max(worst, ms);
    if (ms >= LIMIT_MS) failures.push(`harvestPdfLinks, ${name}: ${Math.round(ms)} ms (limit ${LIMIT_MS} ms)`);
  }
  console.log(`harvestPdfLinks on hostile input: ${shapes.length} shapes, the slowest ${worst.toFixed(0)} ms (limit ${LIMIT_MS} ms)`);
}

pageCosts();
hostileHtml();
hostilePdfs();
if (failures.length > 0) {
  console.error(`bounds broken:\n  ${failures.join('\n  ')}`);
  process.exitCode = 1;
}
