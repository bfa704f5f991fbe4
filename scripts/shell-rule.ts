/**
 * How often the application-shell rule of --render-auto (stages/extract/app-shell.ts) sends
 * a page to the browser that has its content without one: its false positives, on the test
 * web's pages and on the 121 real article pages of the article-extraction benchmark (read
 * from the shared folder, not copied into the project). The app pages of app.render.test are
 * the pages it must catch. `npm run quality:shells` prints the table; a unit test holds the
 * rule to it.
 */
import { pathToFileURL } from 'node:url';
import { APP_HOST, APP_PAGES, ENDLESS_HOST, ESCAPE_HOST, RenderHosts } from '../testweb/render-hosts.js';
import { buildSiteModel } from '../testweb/site-model.js';
import { renderPage } from '../testweb/render-page.js';
import { TRAP_HOSTS, TRAP_NORMAL_PAGES, TrapHosts } from '../testweb/trap-hosts.js';
import { PolitenessHosts, politenessHostPaths } from '../testweb/politeness-hosts.js';
import { extractHtml } from '../stages/extract/extract-html.js';
import { appShellReason, SHELL_MAX_WORDS } from '../stages/extract/app-shell.js';
import { loadBenchmarkPages } from './article-benchmark.js';

export interface Corpus {
  name: string;
  /** true: every page should be a shell (recall); false: none should (false positives) */
  shells: boolean;
  pages: Array<{ url: string; html: string }>;
}

export interface CorpusResult {
  name: string;
  shells: boolean;
  pages: number;
  /** pages the rule calls shells */
  matched: number;
  /** the pages it got wrong, with the rule's reason (or none) */
  wrong: string[];
  /** pages with a running script and an empty mount element, which only the word bound decides */
  scriptedWithMount: number;
  /** the fewest words among those that are not shells (how far the bound is from a false positive) */
  fewestWordsNotShell: number | null;
}

const body = (b: string | Buffer) => (typeof b === 'string' ? b : b.toString('utf8'));

/** Every HTML page the test web serves on its site, trap, politeness and render hosts (hostile.test's misbehaviours are not pages). */
export function testWebCorpora(siteHosts = 20): Corpus[] {
  const model = buildSiteModel({ hosts: siteHosts, seed: 1 });
  const site: Corpus = { name: `test web: ${siteHosts} site hosts (*.site.test)`, shells: false, pages: [] };
  for (const host of model.byName.values()) {
    for (const r of host.resources.values()) if (r.kind === 'html') site.pages.push({ url: `http://${host.name}${r.path}`, html: renderPage(host.name, r) });
  }
  const other: Corpus = { name: 'test web: trap, politeness and endless hosts', shells: false, pages: [] };
  const traps = new TrapHosts();
  for (const host of TRAP_HOSTS) for (const p of TRAP_NORMAL_PAGES) other.pages.push({ url: `http://${host}${p}`, html: body(traps.respond(host, 'GET', p).body) });
  const polite = new PolitenessHosts(true, Date.now());
  for (const host of polite.hostNames) {
    for (const p of politenessHostPaths(host) ?? []) {
      const r = polite.respond(host, 'GET', p, Date.now());
      if (r.status === 200 && r.type.startsWith('text/html')) other.pages.push({ url: `http://${host}${p}`, html: body(r.body) });
    }
  }
  const render = new RenderHosts();
  other.pages.push({ url: `http://${ENDLESS_HOST}/`, html: body(render.respond(ENDLESS_HOST, 'GET', '/').body) });
  // the escape page is a shell by the rule, and rightly: a line of its text is written by its script
  const apps: Corpus = { name: 'test web: app.render.test and escape.render.test (text built by their scripts)', shells: true, pages: [] };
  for (const p of Object.keys(APP_PAGES)) apps.pages.push({ url: `http://${APP_HOST}${p}`, html: body(render.respond(APP_HOST, 'GET', p).body) });
  apps.pages.push({ url: `http://${ESCAPE_HOST}/`, html: body(render.respond(ESCAPE_HOST, 'GET', '/').body) });
  return [site, other, apps];
}

export function articleCorpus(): Corpus {
  return { name: 'article-extraction benchmark: 121 real article pages', shells: false, pages: loadBenchmarkPages().map((p) => ({ url: p.url, html: p.html })) };
}

export function judgeCorpus(c: Corpus): CorpusResult {
  let matched = 0;
  let scriptedWithMount = 0;
  let fewestWordsNotShell: number | null = null;
  const wrong: string[] = [];
  for (const p of c.pages) {
    const doc = extractHtml(p.html, p.url);
    const reason = appShellReason({ text: doc.text, ...doc.shell });
    if (reason) matched++;
    if ((reason !== null) !== c.shells) wrong.push(`${p.url}: ${reason ?? 'not a shell'}`);
    if (doc.shell.scripts > 0 && doc.shell.emptyMounts > 0) {
      scriptedWithMount++;
      if (!reason) {
        const words = doc.text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
        fewestWordsNotShell = Math.min(fewestWordsNotShell ?? words, words);
      }
    }
  }
  return { name: c.name, shells: c.shells, pages: c.pages.length, matched, wrong, scriptedWithMount, fewestWordsNotShell };
}

const pct = (n: number, d: number) => `${((100 * n) / Math.max(1, d)).toFixed(1)} %`;

export function formatResults(results: readonly CorpusResult[]): string {
  const lines = [
    `| corpus | pages | called shells | rate | with a script and an empty mount | fewest words of those not called shells (bound: ${SHELL_MAX_WORDS}) |`,
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    const rate = r.shells ? `recall ${pct(r.matched, r.pages)}` : `false positives ${pct(r.matched, r.pages)}`;
    lines.push(`| ${r.name} | ${r.pages} | ${r.matched} | ${rate} | ${r.scriptedWithMount} | ${r.fewestWordsNotShell ?? '-'} |`);
  }
  for (const r of results) for (const w of r.wrong) lines.push(`  ${r.shells ? 'missed' : 'false positive'}: ${w}`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(formatResults([...testWebCorpora(), articleCorpus()].map(judgeCorpus)) + '\n');
}
