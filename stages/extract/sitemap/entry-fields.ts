// The optional fields of a sitemap entry: <lastmod>, <changefreq>, <priority>. A value that
// cannot be read is null (unknown), never an error: the URL itself is still good.

import { CHANGEFREQS } from './types.js';

// W3C datetime (https://www.w3.org/TR/NOTE-datetime): YYYY, YYYY-MM, YYYY-MM-DD, or a date with
// hh:mm, hh:mm:ss or hh:mm:ss.s and a zone (Z, +hh:mm). Tolerated as crawler-commons does, since
// generators get it slightly wrong: a space for the T, a missing zone (read as UTC), +hhmm.
const W3C_DATETIME = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/;

/**
 * How far ahead of UTC a local date can be: UTC+14 (Kiribati). A date without a time, or a time
 * without a zone, is some zone's local time, so "today" there may start up to 14 h after now in UTC.
 */
export const MAX_ZONE_AHEAD_MS = 14 * 3_600_000;

const EPOCH_YEAR = 1970;

/**
 * A `<lastmod>` as epoch ms, or null when it is not a W3C datetime or lies in the future: later
 * than `now + skewMs` for a timestamp with a zone, later than `now + skewMs + 14 h` for a bare
 * date or a zone-less time (see MAX_ZONE_AHEAD_MS). A value within the allowance is clamped to
 * `now`, so a lastmod handed on is never after the time of parsing. Years before 1970 are null.
 */
export function parseLastmod(text: string, now: number, skewMs: number): number | null {
  const m = W3C_DATETIME.exec(text.trim());
  if (!m) return null;
  const [, y, mo = '01', d = '01', hh, mi, ss = '00', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = hh === undefined ? 0 : Number(hh);
  const minute = mi === undefined ? 0 : Number(mi);
  // a leap second (:60) is read as :59
  const second = Math.min(Number(ss), 59);
  if (year < EPOCH_YEAR || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || Number(ss) > 60) return null;
  const offsetMs = zoneOffsetMs(zone);
  if (offsetMs === undefined) return null;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, Number(`0.${frac || '0'}`) * 1000) - offsetMs;
  const zoned = hh !== undefined && zone !== undefined;
  const allowance = skewMs + (zoned ? 0 : MAX_ZONE_AHEAD_MS);
  if (ms > now + allowance) return null;
  return Math.min(ms, now);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** ms to subtract for a zone designator; 0 when there is none (UTC); undefined when out of range. */
function zoneOffsetMs(zone: string | undefined): number | undefined {
  if (zone === undefined || zone === 'Z' || zone === 'z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 14 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes) * 60_000;
}

/** A `<changefreq>` of the spec's list, in lower case (case is forgiven), or null. */
export function parseChangefreq(text: string): string | null {
  const value = text.trim().toLowerCase();
  return CHANGEFREQS.includes(value) ? value : null;
}

/** A `<priority>` in 0.0–1.0, or null (out of range, or not a plain decimal number). */
export function parsePriority(text: string): number | null {
  const value = text.trim();
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(value)) return null;
  const n = Number(value);
  return n >= 0 && n <= 1 ? n : null;
}
