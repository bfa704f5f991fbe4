/**
 * Language identification from text, for pages whose markup names no language.
 *
 * franc-min (trigram profiles of the 82 languages with 8M+ speakers, every major script;
 * 1.4 MB of heap per extract thread) picks the language; languages written in a script
 * of their own (Japanese, Korean, Thai, Greek …) are told by script. It answers in
 * ISO 639-3; pages keep a BCP 47 tag (the ISO 639-1 code where there is one, as `lang`
 * attributes write it) and captures the ISO 639-3 code (cc-index's `content_languages`).
 * Accuracy per script on the Universal Declaration of Human Rights: docs/extraction.md
 * (scripts/language-accuracy.ts).
 */
import { franc } from 'franc-min';
import { iso6393To1 } from 'iso-639-3';

/**
 * Shorter text is too little to tell (trigram counts are noise): null rather than a guess.
 * A Han, kana or Hangul character says about as much as a Latin word, so counts three.
 */
const MIN_CHARS = 60;
const DENSE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
/** The first characters are enough, and keep huge pages cheap (franc's own cap is 2048). */
const MAX_CHARS = 1_000;

/**
 * franc answers with an individual language where the web's `lang` tags use its
 * macrolanguage (Standard Arabic `arb` is written `ar`, Mandarin `cmn` is `zh` …).
 */
const MACROLANGUAGE_TAG: Readonly<Record<string, string>> = {
  arb: 'ar', cmn: 'zh', zlm: 'ms', pes: 'fa', uzn: 'uz', azj: 'az', npi: 'ne', plt: 'mg', swh: 'sw',
  ekk: 'et', lvs: 'lv', khk: 'mn', ory: 'or', pbu: 'ps', ydd: 'yi', gaz: 'om', quy: 'qu', qug: 'qu',
  hms: 'hmn', hnj: 'hmn', zyb: 'za', koi: 'kv', skr: 'lah', ckb: 'ku', kmr: 'ku',
};

/** A BCP 47 language tag (`en`, `zh`, `ceb`) for `text`, or null when it cannot be told. */
export function detectLanguage(text: string): string | null {
  const sample = text.slice(0, MAX_CHARS);
  const dense = sample.match(DENSE_SCRIPT)?.length ?? 0;
  if (sample.trim().length + 2 * dense < MIN_CHARS) return null;
  const code = franc(sample, { minLength: 1 });
  if (code === 'und') return null;
  return MACROLANGUAGE_TAG[code] ?? iso6393To1[code] ?? code;
}
