/**
 * Lines that are an article's furniture rather than its text, recognised by what they say
 * when the markup does not say it: bylines ("By Jane Doe and John Roe"), date lines
 * ("Published 10:02 AM EST Nov 19, 2019 | Updated …") and advertisement labels.
 * Only short lines are judged: a sentence that starts with "By the end of …" is prose.
 */

/** Longer lines are prose, whatever they start with. */
const MAX_FURNITURE_CHARS = 100;

const BYLINE_START = /^(?:by|von|par|por|di|door|av|af)\s+\S/i;
/** A byline is a name or list of names: it does not end a sentence. */
const SENTENCE_END = /[.!?…]["”’)]?$/;

/** "By Jane Doe", "by Jeff Foust", "Von Hannah Lindqvist, Metro reporter · 14 March 2024". */
export function isBylineLine(text: string): boolean {
  return text.length <= MAX_FURNITURE_CHARS && BYLINE_START.test(text) && !SENTENCE_END.test(text);
}

const MONTHS =
  'jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?';
const WEEKDAYS = 'mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?';
/** The parts of a date line: dates, times, weekdays, zones and the words around them. */
const DATE_PARTS = new RegExp(
  [
    `\\b(?:${MONTHS})\\b\\.?`,
    `\\b(?:${WEEKDAYS})\\b\\.?`,
    '\\b\\d{1,4}(?:[-/.]\\d{1,2}){1,2}\\b', // 2019-11-19, 19.11.2019, 11/19/19
    '\\b\\d{1,2}:\\d{2}(?::\\d{2})?\\s*(?:[ap]\\.?m\\.?)?', // 10:02 am
    '\\b\\d{1,4}(?:st|nd|rd|th)?\\b', // day and year numbers
    '\\b(?:[ap]\\.?m\\.?|utc|gmt|[ecmp][sd]t|hst|bst|cet|cest)\\b',
    '\\b(?:published|updated|posted|modified|last|on|at|am|um|le|el|today|yesterday|original|date)\\b:?',
  ].join('|'),
  'gi',
);
/** What a date has to have: a month name, a numeric date or a time. */
const HAS_DATE = new RegExp(`\\b(?:${MONTHS})\\b|\\b\\d{1,4}[-/.]\\d{1,2}[-/.]\\d{1,4}\\b|\\b\\d{1,2}:\\d{2}\\b`, 'i');
/** Letters left once the date parts are gone: a source name ("CBS News") may stay, a sentence may not. */
const MAX_LEFT_LETTERS = 12;

/** "Published 10:02 AM EST Nov 19, 2019", "18 NOV 2019", "Updated on: November 19, 2019 / 10:07 AM / CBS News". */
export function isDateLine(text: string): boolean {
  if (text.length > MAX_FURNITURE_CHARS || !HAS_DATE.test(text)) return false;
  const left = text.replace(DATE_PARTS, '');
  let letters = 0;
  for (const c of left) if (/\p{L}/u.test(c) && ++letters > MAX_LEFT_LETTERS) return false;
  return true;
}

/** "Advertisement", "Anzeige", "Publicité" …: the label of an ad slot. */
const AD_LABEL =
  /^(?:advertisement|advertising|advert|ads?|sponsored|anzeige|werbung|publicit[ée]|publicidad|pubblicit[àa]|reklama|реклама|广告|iklan|anuncio)$/iu;

export function isAdLabel(text: string): boolean {
  return text.length <= 20 && AD_LABEL.test(text.trim());
}
