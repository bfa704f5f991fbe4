/**
 * An article's author, publication time and site name, from what the page states, most
 * reliable first:
 * - author: JSON-LD `author` of the article (names, `@id` references resolved), `<meta
 *   name=author>` (and the Dublin Core / Parse.ly / Sailthru variants), `article:author`
 *   when it is a name rather than a profile URL, else the page's first byline element;
 * - published_at: JSON-LD `datePublished`, `article:published_time`, a `datePublished` or
 *   publication-date meta, else the first `<time datetime>` after the headline;
 * - site_name: `og:site_name`, the JSON-LD publisher's or WebSite's name, `application-name`.
 * Null when the page does not say. Pure: never throws on odd JSON-LD.
 */

export interface ArticleMeta {
  author: string | null;
  /** epoch ms (UTC) */
  publishedAt: number | null;
  siteName: string | null;
}

/** What the walk collected for these fields (html-walker.ts). */
export interface ArticleMetaSources {
  jsonLd: readonly unknown[];
  openGraph: Readonly<Record<string, string>>;
  /** `<meta name=author>` and friends, first one */
  metaAuthor: string | null;
  /** publication-date metas (itemprop=datePublished, name=pubdate …), first one */
  metaPublished: string | null;
  /** `<meta name=application-name>` */
  applicationName: string | null;
  /** text of the first short author element (class byline/author, rel=author, itemprop=author) */
  bylineText: string | null;
  /** `datetime` of the first `<time>` after the first h1 (or the first at all without an h1) */
  timeNearTitle: string | null;
}

const MAX_NAME = 200;

const AUTHOR_METAS = new Set(['author', 'dc.creator', 'parsely-author', 'sailthru.author', 'byl']);
const PUBLISHED_METAS = new Set([
  'pubdate', 'publishdate', 'publish-date', 'published-date', 'date', 'dc.date', 'dc.date.issued', 'parsely-pub-date', 'sailthru.date',
]);

/** What the walk notices for these fields, as it goes (html-walker.ts feeds it). */
export class ArticleSignals {
  metaAuthor: string | null = null;
  metaPublished: string | null = null;
  applicationName: string | null = null;
  bylineText: string | null = null;
  private firstTime: string | null = null;
  private timeAfterHeadline: string | null = null;
  private headlineSeen = false;

  /** A `<meta>` with a content (name and itemprop lowercased, or null). */
  meta(name: string | null, itemprop: string | null, content: string): void {
    if (name !== null && AUTHOR_METAS.has(name)) this.metaAuthor ??= content;
    else if (name !== null && PUBLISHED_METAS.has(name)) this.metaPublished ??= content;
    else if (name === 'application-name') this.applicationName ??= content;
    if (itemprop === 'datepublished') this.metaPublished ??= content;
  }

  headline(): void {
    this.headlineSeen = true;
  }

  /** A `<time datetime>`. */
  time(datetime: string): void {
    this.firstTime ??= datetime;
    if (this.headlineSeen) this.timeAfterHeadline ??= datetime;
  }

  /** The text of a short author element. */
  byline(text: string): void {
    if (text !== '') this.bylineText ??= text;
  }

  /** The `<time>` near the title: the first after the first h1, or the first at all on a page without one. */
  get timeNearTitle(): string | null {
    return this.headlineSeen ? this.timeAfterHeadline : this.firstTime;
  }
}

type Thing = Record<string, unknown>;

const isThing = (v: unknown): v is Thing => v !== null && typeof v === 'object' && !Array.isArray(v);

function typesOf(t: Thing): string[] {
  const type = t['@type'];
  return (Array.isArray(type) ? type : [type]).filter((x): x is string => typeof x === 'string');
}

/** The thing that describes the article: an *Article, *Posting, Report … with an author or date, else any with a date. */
function articleThing(things: readonly Thing[]): Thing | null {
  const articleType = /(?:Article|Posting|Report|Review|Recipe|WebPage)$/;
  const dated = (t: Thing) => 'datePublished' in t || 'author' in t;
  return things.find((t) => typesOf(t).some((x) => articleType.test(x)) && dated(t)) ?? things.find((t) => 'datePublished' in t) ?? null;
}

function clean(s: string): string | null {
  const t = s.replace(/\s+/g, ' ').trim();
  return t === '' ? null : t.length > MAX_NAME ? t.slice(0, MAX_NAME).trimEnd() : t;
}

/** The names in a JSON-LD person/organization value: a string, a thing with a name, an `@id` reference, or a list of them. */
function namesOf(value: unknown, byId: ReadonlyMap<string, Thing>, depth = 0): string[] {
  if (depth > 3) return [];
  if (typeof value === 'string') return isUrl(value) ? [] : [value];
  if (Array.isArray(value)) return value.flatMap((v) => namesOf(v, byId, depth + 1));
  if (!isThing(value)) return [];
  const name = value['name'];
  if (name !== undefined) return namesOf(name, byId, depth + 1);
  const ref = value['@id'];
  const target = typeof ref === 'string' ? byId.get(ref) : undefined;
  return target !== undefined && target !== value ? namesOf(target, byId, depth + 1) : [];
}

const isUrl = (s: string) => /^(?:https?:)?\/\//i.test(s.trim());

/** "By", "Analysis by", "Von" … before the name(s). */
const BYLINE_LEAD = /^\s*(?:\p{L}+\s+)?(?:by|von|par|por|di|door|av|af)\b\s*:?\s*/iu;
/** Where the name(s) end: a separator, or the start of a date. */
const AFTER_NAMES = new RegExp(
  [
    '\\s+[-–—|·•/]\\s+',
    '\\s*[|·•]\\s*',
    '\\s+(?:on|am|le|el)\\s+\\d',
    '\\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\\.?\\s+\\d',
    '\\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day\\b',
    '\\s+\\d{1,4}[-/.]\\d{1,2}[-/.]\\d{1,4}',
  ].join('|'),
  'i',
);

/** "By Jane Doe - 11/18/19 11:04 PM EST" → "Jane Doe": the byline's lead words and what follows the names go. */
export function nameFromByline(text: string): string | null {
  const names = text.replace(BYLINE_LEAD, '').split(AFTER_NAMES)[0] ?? '';
  return isUrl(names) ? null : clean(names);
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * An ISO 8601 date or date-time as epoch ms; a time without a zone is taken as UTC (a page
 * does not say where it was written). Null for anything else or an impossible date.
 */
export function parseIsoDate(raw: string): number | null {
  const m = ISO_DATE.exec(raw.trim());
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number];
  const ms = Math.round(Number(`0.${m[7] ?? '0'}`) * 1000);
  if (year < 1900 || year > 2200 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  let t = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  if (new Date(t).getUTCDate() !== day) return null; // 31 February
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    t -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0)) * 60_000;
  }
  return t;
}

export function articleMeta(src: ArticleMetaSources): ArticleMeta {
  const things = src.jsonLd.filter(isThing);
  const byId = new Map<string, Thing>();
  for (const t of things) if (typeof t['@id'] === 'string') byId.set(t['@id'], t);
  const article = articleThing(things);

  const ogAuthor = src.openGraph['article:author'];
  const ldAuthors = article === null ? [] : namesOf(article['author'], byId).map(nameFromByline);
  const author =
    clean([...new Set(ldAuthors.filter((n): n is string => n !== null))].join(', ')) ??
    (src.metaAuthor !== null ? nameFromByline(src.metaAuthor) : null) ??
    (ogAuthor !== undefined ? nameFromByline(ogAuthor) : null) ??
    (src.bylineText !== null ? nameFromByline(src.bylineText) : null);

  const dates = [
    article?.['datePublished'],
    src.openGraph['article:published_time'],
    src.metaPublished,
    src.timeNearTitle,
  ];
  let publishedAt: number | null = null;
  for (const d of dates) {
    const raw = Array.isArray(d) ? d[0] : d;
    if (typeof raw === 'string' && (publishedAt = parseIsoDate(raw)) !== null) break;
  }

  const website = things.find((t) => typesOf(t).includes('WebSite'));
  const siteNames = [src.openGraph['og:site_name'], namesOf(article?.['publisher'], byId)[0], namesOf(website?.['name'], byId)[0], src.applicationName];
  const siteName = siteNames.map((n) => (n == null || isUrl(n) ? null : clean(n))).find((n) => n !== null) ?? null;

  return { author, publishedAt, siteName };
}
