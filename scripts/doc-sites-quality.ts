/**
 * npm run quality:docs — the main text on real documentation sites (scripts/doc-sites.ts),
 * run by hand: the sites are Debian packages, which neither CI nor the tests install.
 *
 *   apt-get install python3.11-doc python-django-doc developers-reference postgresql-doc-15 \
 *     debian-handbook git-doc sqlite3-doc apache2-doc
 *   npm run quality:docs
 *
 * or, leaving the system's packages alone, unpack them and point at the folder:
 *
 *   apt-get download <the packages above> nodejs-doc && for d in *.deb; do dpkg-deb -x $d root; done
 *   npm run quality:docs -- --root "$PWD/root"        (or DOC_SITES_ROOT=…)
 *
 * (nodejs-doc only that way: installing it makes apt remove the machine's node.)
 *
 * For each site, on a deterministic sample (every Nth page in file order, plus its index
 * pages and tables of contents): the median main/full text ratio, pages whose main text is
 * under 200 characters (beside how many of them have that little content by the label), and
 * precision, recall and F1 of the main text against the generator's body element, scored as
 * the article benchmark is (4-token shingles, shingle-score.ts); then the worst pages with
 * what was kept. Options: --per-site N (pages sampled, default 30), --worst N (default 3),
 * --site NAME, --json FILE (every page's figures), --page SITE/FILE (one page's main text and
 * label in full).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { extractHtml } from '../stages/extract/extract-html.js';
import { quantile } from './article-benchmark.js';
import { DOC_SITES, docSitesRoot, labelHtml, samplePages, siteFiles, type DocSite } from './doc-sites.js';
import { benchmarkMetrics, pageF1, shingleCounts, type ShingleCounts } from './shingle-score.js';

/** "A stored page with next to no main text": the issue's measure (18 of 112 PostgreSQL pages). */
const SHORT_CHARS = 200;

interface PageFigures {
  site: string;
  file: string;
  fullChars: number;
  mainChars: number;
  labelChars: number | null;
  textSource: string;
  counts: ShingleCounts | null;
  f1: number | null;
  main: string;
  label: string | null;
}

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

function measurePage(root: string, site: DocSite, file: string): PageFigures {
  const html = readFileSync(path.join(root, site.dir, file), 'utf8');
  const url = `https://docs.example/${site.name}/${file}`;
  const doc = extractHtml(html, url);
  const labelDoc = labelHtml(html, site);
  const label = labelDoc === null ? null : extractHtml(labelDoc, url).text;
  const counts = label === null ? null : shingleCounts(label, doc.mainText);
  return {
    site: site.name,
    file,
    fullChars: doc.text.length,
    mainChars: doc.mainText.length,
    labelChars: label === null ? null : label.length,
    textSource: doc.textSource,
    counts,
    f1: counts === null ? null : pageF1(counts),
    main: doc.mainText,
    label,
  };
}

const num = (x: number) => x.toFixed(3);
const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b);
const snippet = (s: string, n = 160) => JSON.stringify(s.length > n ? `${s.slice(0, n)}…` : s);

function siteLine(name: string, pages: readonly PageFigures[]): string {
  const labelled = pages.filter((p) => p.counts !== null);
  const m = benchmarkMetrics(labelled.map((p) => p.counts!));
  const short = pages.filter((p) => p.mainChars < SHORT_CHARS).length;
  const shortLabel = pages.filter((p) => p.labelChars !== null && p.labelChars < SHORT_CHARS).length;
  const fallback = pages.filter((p) => p.textSource === 'fallback_full').length;
  return (
    `${name.padEnd(11)} ${String(pages.length).padStart(5)}  ${num(quantile(pages.map((p) => ratio(p.mainChars, p.fullChars)), 0.5))}  ` +
    `${num(quantile(labelled.map((p) => ratio(p.labelChars!, p.fullChars)), 0.5))}  ${String(short).padStart(4)} (${String(shortLabel).padStart(2)})  ` +
    `${num(m.precision)}  ${num(m.recall)}  ${num(m.f1)}  ${String(fallback).padStart(3)}`
  );
}

function main(): void {
  const root = docSitesRoot();
  const perSite = Number(option('--per-site', '30'));
  const worst = Number(option('--worst', '3'));
  const only = option('--site', '');
  const page = option('--page', '');
  const sites = DOC_SITES.filter((s) => (page === '' ? only === '' || s.name === only : page.startsWith(`${s.name}/`)));

  if (page !== '') {
    const site = sites[0];
    if (site === undefined) throw new Error(`--page ${page}: no site named ${page.split('/')[0]} (${DOC_SITES.map((s) => s.name).join(', ')})`);
    const p = measurePage(root, site, page.slice(site.name.length + 1));
    console.log(`${page}: full ${p.fullChars}, main ${p.mainChars} (${p.textSource}), label ${p.labelChars}, F1 ${p.f1?.toFixed(3)}`);
    console.log(`--- main text\n${p.main}\n--- label\n${p.label}`);
    return;
  }

  const all: PageFigures[] = [];
  const missing: DocSite[] = [];
  console.log(`Main text on documentation sites under ${root} (sample: every Nth page for ${perSite} a site, plus index pages)`);
  console.log('site        pages  main/full label/full  <200 (label)  P      R      F1     fallback');
  for (const site of sites) {
    const files = siteFiles(root, site);
    if (files.length === 0) {
      missing.push(site);
      continue;
    }
    const pages = samplePages(files, site, perSite).map((f) => measurePage(root, site, f));
    all.push(...pages);
    console.log(siteLine(site.name, pages));
  }
  if (all.length > 0) console.log(siteLine('all', all));
  for (const s of missing) console.log(`not found: ${s.name} (${s.packageName}) in ${path.join(root, s.dir)}`);

  for (const site of sites) {
    const pages = all.filter((p) => p.site === site.name && p.f1 !== null).sort((a, b) => a.f1! - b.f1!);
    if (pages.length === 0) continue;
    console.log(`\n${site.name} (${site.generator}): worst ${worst} by F1`);
    for (const p of pages.slice(0, worst)) {
      const c = p.counts!;
      console.log(`  ${p.file}  F1 ${num(p.f1!)}  P ${num(ratio(c.tp, c.tp + c.fp))}  R ${num(ratio(c.tp, c.tp + c.fn))}  main ${p.mainChars} of ${p.fullChars} chars, label ${p.labelChars}`);
      console.log(`    kept:  ${snippet(p.main)}`);
      console.log(`    label: ${snippet(p.label ?? '')}`);
    }
    const short = all.filter((p) => p.site === site.name && p.mainChars < SHORT_CHARS);
    if (short.length > 0) console.log(`  under ${SHORT_CHARS} chars: ${short.map((p) => `${p.file} (${p.mainChars}/${p.labelChars})`).join(', ')}`);
  }

  const json = option('--json', '');
  if (json !== '') writeFileSync(json, JSON.stringify(all.map(({ main: _m, label: _l, ...rest }) => rest), null, 1));
  if (all.length === 0) {
    console.error('no documentation site found: install the packages named above (or unpack them and pass --root DIR)');
    process.exitCode = 1;
  }
}

main();
