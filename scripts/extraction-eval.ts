/**
 * Measures main-text extraction against a labelled set: token-level precision, recall and
 * F1 of the extracted main text against the expected one, per page, micro-averaged over
 * all tokens and macro-averaged over pages.
 *
 * The labelled set has two parts:
 * - hand-written pages in test/fixtures/extraction/pages (`<name>.html` + `<name>.txt`);
 * - pages of the local test web, whose generator knows the article text (expectedMainText).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { extractHtml } from '../stages/extract/extract-html.js';
import { detectLanguage } from '../stages/extract/detect-language.js';
import { expectedMainText, renderPage } from '../testweb/render-page.js';
import { buildSiteModel } from '../testweb/site-model.js';
import type { HtmlResource } from '../testweb/model-types.js';

export interface PageScore {
  set: 'fixture' | 'testweb';
  name: string;
  expectedTokens: number;
  extractedTokens: number;
  /** tokens in both (multiset intersection) */
  matchedTokens: number;
  precision: number;
  recall: number;
  f1: number;
}

export interface EvaluationSummary {
  pages: PageScore[];
  micro: { precision: number; recall: number; f1: number };
  macroF1: number;
}

export const FIXTURE_DIR = path.resolve(process.cwd(), 'test/fixtures/extraction/pages');

/** Lowercased runs of letters and digits: what "a token" means for the scores. */
export function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

const f1Of = (p: number, r: number) => (p + r === 0 ? 0 : (2 * p * r) / (p + r));

export function scorePage(set: PageScore['set'], name: string, expected: string, extracted: string): PageScore {
  const want = new Map<string, number>();
  const exp = tokens(expected);
  for (const t of exp) want.set(t, (want.get(t) ?? 0) + 1);
  const got = tokens(extracted);
  let matched = 0;
  for (const t of got) {
    const n = want.get(t) ?? 0;
    if (n > 0) {
      matched++;
      want.set(t, n - 1);
    }
  }
  // an empty expectation met by an empty extraction is a perfect score
  const precision = got.length === 0 ? (exp.length === 0 ? 1 : 0) : matched / got.length;
  const recall = exp.length === 0 ? 1 : matched / exp.length;
  return { set, name, expectedTokens: exp.length, extractedTokens: got.length, matchedTokens: matched, precision, recall, f1: f1Of(precision, recall) };
}

export function summarize(pages: PageScore[]): EvaluationSummary {
  const sum = (k: 'expectedTokens' | 'extractedTokens' | 'matchedTokens') => pages.reduce((a, p) => a + p[k], 0);
  const precision = sum('matchedTokens') / Math.max(1, sum('extractedTokens'));
  const recall = sum('matchedTokens') / Math.max(1, sum('expectedTokens'));
  const macroF1 = pages.reduce((a, p) => a + p.f1, 0) / Math.max(1, pages.length);
  return { pages, micro: { precision, recall, f1: f1Of(precision, recall) }, macroF1 };
}

export async function fixtureScores(dir = FIXTURE_DIR): Promise<PageScore[]> {
  const names = (await fsp.readdir(dir)).filter((f) => f.endsWith('.html')).sort();
  if (names.length === 0) throw new Error(`no labelled pages (*.html with *.txt) in ${dir}`);
  const scores: PageScore[] = [];
  for (const file of names) {
    const name = file.slice(0, -'.html'.length);
    const html = await fsp.readFile(path.join(dir, file), 'utf8');
    const expectedFile = path.join(dir, `${name}.txt`);
    const expected = await fsp.readFile(expectedFile, 'utf8').catch((err: unknown) => {
      throw new Error(`reading the expected main text of ${file} (${expectedFile}): ${String(err)}`);
    });
    scores.push(scorePage('fixture', name, expected, extractHtml(html, `https://fixture.test/${name}`).mainText));
  }
  return scores;
}

/** Every HTML page of the first `hosts` site hosts of the test web (seed 1), all roles and languages. */
export function testWebScores(hosts = 3, pagesPerHost = 8): PageScore[] {
  const model = buildSiteModel({ hosts, seed: 1 });
  const scores: PageScore[] = [];
  for (const host of model.hosts.filter((h) => h.group === 'site')) {
    const pages = [...host.resources.values()].filter((r): r is HtmlResource => r.kind === 'html').slice(0, pagesPerHost);
    for (const page of pages) {
      const html = renderPage(host.name, page);
      const name = `${host.name}${page.path}`;
      scores.push(scorePage('testweb', name, expectedMainText(page), extractHtml(html, `http://${name}`).mainText));
    }
  }
  return scores;
}

export async function evaluateExtraction(): Promise<EvaluationSummary> {
  return summarize([...(await fixtureScores()), ...testWebScores()]);
}

export interface LanguageAccuracy {
  /** texts whose language the markup names (primary subtag), detected without looking at the markup */
  texts: number;
  correct: number;
  /** detector said null (unsure) */
  unsure: number;
  /** detector named another language */
  wrong: number;
}

/**
 * The language detector measured on the labelled pages whose markup names their language:
 * once per page (its main text) and once per paragraph (of the hand-written pages) of at
 * least `minChars` characters.
 */
export async function languageAccuracy(minChars = 150): Promise<{ pages: LanguageAccuracy; paragraphs: LanguageAccuracy }> {
  const labelled: Array<{ lang: string; text: string; prose: boolean }> = [];
  for (const file of (await fsp.readdir(FIXTURE_DIR)).filter((f) => f.endsWith('.html'))) {
    const r = extractHtml(await fsp.readFile(path.join(FIXTURE_DIR, file), 'utf8'), 'https://fixture.test/');
    if (r.languageSource === 'markup' && r.language !== null) labelled.push({ lang: r.language.split('-')[0]!, text: r.mainText, prose: true });
  }
  const model = buildSiteModel({ hosts: 6, seed: 1 });
  for (const host of model.hosts.filter((h) => h.group === 'site')) {
    for (const page of [...host.resources.values()].filter((r): r is HtmlResource => r.kind === 'html').slice(0, 4)) {
      labelled.push({ lang: page.lang, text: expectedMainText(page), prose: false });
    }
  }
  const tally = (items: ReadonlyArray<{ lang: string; text: string }>): LanguageAccuracy => {
    const acc = { texts: items.length, correct: 0, unsure: 0, wrong: 0 };
    for (const { lang, text } of items) {
      const got = detectLanguage(text);
      if (got === lang) acc.correct++;
      else if (got === null) acc.unsure++;
      else acc.wrong++;
    }
    return acc;
  };
  // paragraphs of the hand-written pages only: the test web's text is random words, not prose
  const paragraphs = labelled
    .filter((l) => l.prose)
    .flatMap(({ lang, text }) => text.split('\n').filter((t) => t.length >= minChars).map((t) => ({ lang, text: t })));
  return { pages: tally(labelled), paragraphs: tally(paragraphs) };
}
