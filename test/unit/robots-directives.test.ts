/**
 * Page-level robots directives, table-driven from the published rules: Google Search
 * Central's "Robots meta tag, data-nosnippet, and X-Robots-Tag specifications"
 * (developers.google.com/search/docs/crawling-indexing/robots-meta-tag, quoted as [G]) and
 * MDN's X-Robots-Tag page (developer.mozilla.org/en-US/docs/Web/HTTP/Headers/X-Robots-Tag,
 * quoted as [MDN]). Each case names the sentence it checks.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addressesCrawler,
  describeDirectives,
  indexingVerdict,
  metaRobotsRules,
  parseDirectiveDate,
  xRobotsTagGroup,
  xRobotsTagRules,
} from '../../stages/shared/robots/robots-directives.js';

const TOKEN = 'examplebot';
/** a fetch time after the docs' 2010 example date and before the far-future ones */
const FETCHED = Date.parse('2024-05-01T00:00:00Z');

interface Case {
  /** the rule being checked, quoted */
  rule: string;
  header: string;
  applies: string[];
  noindex: boolean;
  nofollow: boolean;
}

const verdictOf = (header: string) => indexingVerdict([{ source: 'x-robots-tag', rules: xRobotsTagRules(header, TOKEN) }], FETCHED);

describe('X-Robots-Tag', () => {
  const cases: Case[] = [
    { rule: '[G] "X-Robots-Tag: noindex" instructs crawlers not to index a page', header: 'noindex', applies: ['noindex'], noindex: true, nofollow: false },
    { rule: '[G] nofollow: "Do not follow the links on this page"', header: 'nofollow', applies: ['nofollow'], noindex: false, nofollow: true },
    { rule: '[G] none: "Equivalent to noindex, nofollow"', header: 'none', applies: ['none'], noindex: true, nofollow: true },
    {
      rule: '[G] all: "There are no restrictions for indexing or serving. This rule is the default value and has no effect if explicitly listed"',
      header: 'all',
      applies: ['all'],
      noindex: false,
      nofollow: false,
    },
    { rule: '[G] "you can specify a comma-separated list of rules"', header: 'noindex, nofollow', applies: ['noindex', 'nofollow'], noindex: true, nofollow: true },
    { rule: '[G] "Both the name and the specified values are not case sensitive"', header: 'NoIndex, NOFOLLOW', applies: ['noindex', 'nofollow'], noindex: true, nofollow: true },
    {
      rule: '[G] "Multiple X-Robots-Tag headers can be combined within the HTTP response": noarchive and unavailable_after, joined as the HTTP client joins them',
      header: 'noarchive, unavailable_after: 25 Jun 2010 15:00:00 PST',
      applies: ['noarchive', 'unavailable_after: 25 Jun 2010 15:00:00 PST'],
      noindex: true, // a date before the fetch: noindex
      nofollow: false,
    },
    {
      rule: '[G] "The X-Robots-Tag may optionally specify a user agent before the rules": googlebot: nofollow + otherbot: noindex, nofollow (neither is us)',
      header: 'googlebot: nofollow, otherbot: noindex, nofollow',
      applies: [],
      noindex: false,
      nofollow: false,
    },
    { rule: '[G] a user agent before the rules: ours', header: 'ExampleBot: noindex', applies: ['noindex'], noindex: true, nofollow: false },
    { rule: '[G] "Rules specified without a user agent are valid for all crawlers"', header: 'nofollow, googlebot: noindex', applies: ['nofollow'], noindex: false, nofollow: true },
    {
      rule: '[MDN] "An optional <bot-name>: specifies the user agent that the subsequent rules should apply to": X-Robots-Tag: <indexing-rule>, <bot-name>: <indexing-rule>',
      header: 'noarchive, examplebot: noindex, nofollow',
      applies: ['noarchive', 'noindex', 'nofollow'],
      noindex: true,
      nofollow: true,
    },
    {
      rule: '[MDN] the subsequent rules apply to a bot until the next bot: "googlebot: noindex" then ours',
      header: 'googlebot: noindex, examplebot: nofollow',
      applies: ['nofollow'],
      noindex: false,
      nofollow: true,
    },
    {
      rule: '[MDN] ...and ours until the next bot',
      header: 'examplebot: nofollow, otherbot: noindex, noarchive',
      applies: ['nofollow'],
      noindex: false,
      nofollow: true,
    },
    { rule: '[G] user agent names are not case sensitive', header: 'EXAMPLEBOT: none', applies: ['none'], noindex: true, nofollow: true },
    {
      rule: 'a user agent is matched by its product token, as in robots.txt (ExampleBot/2.1 is ExampleBot)',
      header: 'ExampleBot/2.1: noindex',
      applies: ['noindex'],
      noindex: true,
      nofollow: false,
    },
    { rule: 'another bot whose name starts with ours is not ours', header: 'examplebot-news: noindex', applies: [], noindex: false, nofollow: false },
    {
      rule: '[G] "In the case of conflicting robots rules, the more restrictive rule applies"',
      header: 'index, follow, noindex',
      applies: ['index', 'follow', 'noindex'],
      noindex: true,
      nofollow: false,
    },
    {
      rule: '[G] unavailable_after: "The date/time must be specified in a widely adopted format including, but not limited to RFC 822, RFC 850, and ISO 8601": ISO 8601, past',
      header: 'unavailable_after: 2020-09-21',
      applies: ['unavailable_after: 2020-09-21'],
      noindex: true,
      nofollow: false,
    },
    {
      rule: '[G] unavailable_after in RFC 850 form, whose weekday is followed by a comma, in the future',
      header: 'unavailable_after: Wednesday, 03-Nov-2094 15:00:00 PST, nofollow',
      applies: ['unavailable_after: Wednesday, 03-Nov-2094 15:00:00 PST', 'nofollow'],
      noindex: false,
      nofollow: true,
    },
    {
      rule: '[G] unavailable_after in RFC 822/1123 form, past, addressed to us',
      header: 'examplebot: unavailable_after: Sun, 06 Nov 1994 08:49:37 GMT',
      applies: ['unavailable_after: Sun, 06 Nov 1994 08:49:37 GMT'],
      noindex: true,
      nofollow: false,
    },
    { rule: '[G] "The rule is ignored if no valid date/time is specified"', header: 'unavailable_after: soon', applies: ['unavailable_after: soon'], noindex: false, nofollow: false },
    {
      rule: '[G] max-snippet, max-image-preview, max-video-preview carry a value after a colon: not user agents',
      header: 'max-snippet: 20, max-image-preview: large, max-video-preview: -1, noindex',
      applies: ['max-snippet: 20', 'max-image-preview: large', 'max-video-preview: -1', 'noindex'],
      noindex: true,
      nofollow: false,
    },
    {
      rule: '[G] noarchive, nosnippet, notranslate, noimageindex, indexifembedded are recorded, not acted on',
      header: 'noarchive, nosnippet, notranslate, noimageindex, indexifembedded',
      applies: ['noarchive', 'nosnippet', 'notranslate', 'noimageindex', 'indexifembedded'],
      noindex: false,
      nofollow: false,
    },
    { rule: 'empty items and spaces are skipped', header: ' , noindex ,, ', applies: ['noindex'], noindex: true, nofollow: false },
    { rule: 'a user agent with nothing after it applies to what follows', header: 'examplebot:, nofollow', applies: ['nofollow'], noindex: false, nofollow: true },
    { rule: 'an unreadable "name with space:" is skipped', header: 'other bot: noindex', applies: [], noindex: false, nofollow: false },
  ];
  for (const c of cases) {
    test(c.rule, () => {
      assert.deepEqual(xRobotsTagRules(c.header, TOKEN), c.applies, `rules for ${TOKEN} in "${c.header}"`);
      assert.deepEqual(verdictOf(c.header), { noindex: c.noindex, nofollow: c.nofollow });
    });
  }

  test('no header, or a header with nothing for us, is no group', () => {
    assert.equal(xRobotsTagGroup({ 'content-type': 'text/html' }, TOKEN), null);
    assert.equal(xRobotsTagGroup({ 'x-robots-tag': 'googlebot: noindex' }, TOKEN), null);
    assert.deepEqual(xRobotsTagGroup({ 'x-robots-tag': 'noindex, googlebot: nofollow' }, TOKEN), { source: 'x-robots-tag', rules: ['noindex'] });
  });

  test('[G] "Multiple X-Robots-Tag headers can be combined": each line on its own, a user agent covering its line only', () => {
    // X-Robots-Tag: otherbot: nofollow
    // X-Robots-Tag: noindex
    const headers = { 'x-robots-tag': 'otherbot: nofollow, noindex' };
    const lines = { 'x-robots-tag': ['otherbot: nofollow', 'noindex'] };
    assert.deepEqual(xRobotsTagGroup(headers, TOKEN, lines), { source: 'x-robots-tag', rules: ['noindex'] });
    // ours on the first line, everyone's on the second
    assert.deepEqual(xRobotsTagGroup({}, TOKEN, { 'x-robots-tag': ['ExampleBot: nofollow', 'noarchive'] }), { source: 'x-robots-tag', rules: ['nofollow', 'noarchive'] });
    // joined (the lines unknown), the prefix runs on: otherbot's
    assert.equal(xRobotsTagGroup(headers, TOKEN), null);
  });

  test('a header of thousands of rules keeps 32 of them, counted after other bots\' are left out', () => {
    assert.equal(xRobotsTagRules(Array(5000).fill('noarchive').join(', '), TOKEN).length, 32);
    const others = Array.from({ length: 40 }, (_, i) => `bot${i}: noarchive`).join(', ');
    assert.deepEqual(xRobotsTagRules(`${others}, examplebot: noindex`, TOKEN), ['noindex']);
  });
});

describe('meta robots', () => {
  test('[G] "The value of the name attribute (robots) specifies that the rule applies to all crawlers"', () => {
    assert.ok(addressesCrawler('robots', TOKEN));
    assert.ok(addressesCrawler(' ROBOTS ', TOKEN));
  });
  test('[G] "To address a specific crawler, replace the robots value of the name attribute with the name of the crawler"; "Both the name and the content attributes are case-insensitive"', () => {
    assert.ok(addressesCrawler('ExampleBot', TOKEN));
    assert.ok(!addressesCrawler('googlebot', TOKEN), 'a meta for another bot is not for us');
    assert.ok(!addressesCrawler('examplebot-news', TOKEN));
    assert.ok(!addressesCrawler('description', TOKEN));
  });
  const contents: Array<[string, string, string[], boolean, boolean]> = [
    ['[G] <meta name="robots" content="noindex">', 'noindex', ['noindex'], true, false],
    ['[G] "combining robots meta tag rules with commas"', 'noindex, nofollow', ['noindex', 'nofollow'], true, true],
    ['[G] content="unavailable_after: 2020-09-21"', 'unavailable_after: 2020-09-21', ['unavailable_after: 2020-09-21'], true, false],
    ['[G] content="max-snippet:20, max-image-preview:large"', 'max-snippet:20, max-image-preview:large', ['max-snippet: 20', 'max-image-preview: large'], false, false],
    ['spaces instead of commas, as lenient parsers read them', 'NOINDEX NOFOLLOW', ['noindex', 'nofollow'], true, true],
    ['a meta has no user agent prefixes: "googlebot:" is an unknown valued rule', 'googlebot: noindex', ['googlebot: noindex'], false, false],
  ];
  for (const [name, content, rules, noindex, nofollow] of contents) {
    test(name, () => {
      assert.deepEqual(metaRobotsRules(content), rules);
      assert.deepEqual(indexingVerdict([{ source: 'meta robots', rules }], FETCHED), { noindex, nofollow });
    });
  }
});

describe('combined: the most restrictive wins, and the source is recorded', () => {
  test('[MDN] "In the case of conflicting robot rules within the X-Robots-Tag or between the X-Robots-Tag HTTP header and the <meta name="robots"> element, the more restrictive rule applies"', () => {
    const groups = [
      { source: 'x-robots-tag', rules: ['nofollow', 'noarchive'] },
      { source: 'meta robots', rules: ['index', 'follow'] },
      { source: 'meta examplebot', rules: ['noindex'] },
    ];
    assert.deepEqual(indexingVerdict(groups, FETCHED), { noindex: true, nofollow: true });
    assert.equal(describeDirectives(groups), 'x-robots-tag: nofollow, noarchive; meta robots: index, follow; meta examplebot: noindex');
    assert.equal(describeDirectives([]), null);
    assert.equal(describeDirectives([{ source: 'meta robots', rules: [] }]), null);
  });
  test('without a fetch time, unavailable_after is not judged', () => {
    assert.deepEqual(indexingVerdict([{ source: 'meta robots', rules: ['unavailable_after: 2020-09-21'] }]), { noindex: false, nofollow: false });
  });
  test('unavailable_after exactly at the fetch time has not passed yet', () => {
    assert.deepEqual(indexingVerdict([{ source: 'x', rules: ['unavailable_after: 2024-05-01T00:00:00Z'] }], FETCHED).noindex, false);
    assert.deepEqual(indexingVerdict([{ source: 'x', rules: ['unavailable_after: 2024-04-30T23:59:59Z'] }], FETCHED).noindex, true);
  });
});

describe('unavailable_after dates', () => {
  const dates: Array<[string, string | null]> = [
    ['25 Jun 2010 15:00:00 PST', '2010-06-25T23:00:00.000Z'],
    ['25-Aug-2007 15:00:00 EST', '2007-08-25T20:00:00.000Z'],
    ['Wednesday, 03-Nov-27 15:00:00 GMT', '2027-11-03T15:00:00.000Z'],
    ['Sun, 06 Nov 1994 08:49:37 GMT', '1994-11-06T08:49:37.000Z'],
    ['2020-09-21', '2020-09-21T00:00:00.000Z'],
    ['2020-09-21T10:00:00+02:00', '2020-09-21T08:00:00.000Z'],
    ['2020-09-21T10:00:00Z', '2020-09-21T10:00:00.000Z'],
    // no zone: UTC, whatever the machine's zone
    ['2020-09-21T10:00', '2020-09-21T10:00:00.000Z'],
    ['25 Jun 2010 15:00:00', '2010-06-25T15:00:00.000Z'],
    ['soon', null],
    ['', null],
  ];
  for (const [raw, iso] of dates) {
    test(`${JSON.stringify(raw)} -> ${iso}`, () => {
      const t = parseDirectiveDate(raw);
      assert.equal(t === null ? null : new Date(t).toISOString(), iso);
    });
  }
});
