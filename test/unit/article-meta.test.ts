// Author, publication time and site name of an article (stages/extract/article-meta.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { articleMeta, nameFromByline, parseIsoDate, type ArticleMetaSources } from '../../stages/extract/article-meta.js';
import { extractHtml } from '../../stages/extract/extract-html.js';

const none: ArticleMetaSources = {
  jsonLd: [],
  openGraph: {},
  metaAuthor: null,
  metaPublished: null,
  applicationName: null,
  bylineText: null,
  timeNearTitle: null,
};

describe('article fields', () => {
  it('parseIsoDate: ISO dates and date-times with or without a zone (none = UTC); anything else is null', () => {
    const cases: Array<[string, number | null]> = [
      ['2019-11-19', Date.UTC(2019, 10, 19)],
      ['2019-11-19T10:02:00Z', Date.UTC(2019, 10, 19, 10, 2)],
      ['2019-11-19T10:02:00-05:00', Date.UTC(2019, 10, 19, 15, 2)],
      ['2019-11-19T10:02:00+0530', Date.UTC(2019, 10, 19, 4, 32)],
      ['2019-11-19 10:02', Date.UTC(2019, 10, 19, 10, 2)],
      ['2019-11-20T01:50:59.403Z', Date.UTC(2019, 10, 20, 1, 50, 59, 403)],
      [' 2019-11-19T10:02:00+01 ', Date.UTC(2019, 10, 19, 9, 2)],
      ['2019-02-31', null],
      ['2019-13-01', null],
      ['0000-00-00', null],
      ['November 19, 2019', null],
      ['yesterday', null],
      ['', null],
    ];
    for (const [raw, want] of cases) assert.equal(parseIsoDate(raw), want, raw);
  });

  it('nameFromByline: the names without the lead word, the date or the job after a separator', () => {
    const cases: Array<[string, string | null]> = [
      ['By Jane Doe', 'Jane Doe'],
      ['by Jeff Foust', 'Jeff Foust'],
      ['By Justine Coleman - 11/18/19 11:04 PM EST', 'Justine Coleman'],
      ['Analysis by Chris Cillizza, CNN Editor-at-large', 'Chris Cillizza, CNN Editor-at-large'],
      ['Jeff Foust Monday, November 18, 2019', 'Jeff Foust'],
      ['JERUSALEM POST STAFF NOVEMBER 20, 2019 10:43', 'JERUSALEM POST STAFF'],
      ['By HNN Staff | November 18, 2019 at 2:26 PM HST', 'HNN Staff'],
      ['Von Hannah Lindqvist · 14. März 2024', 'Hannah Lindqvist'],
      ['By', null],
      ['https://www.facebook.com/jane.doe', null],
    ];
    for (const [text, want] of cases) assert.equal(nameFromByline(text), want, text);
  });

  it('JSON-LD first: the article thing (in a @graph, with @id references) over meta tags and the byline', () => {
    const jsonLd = [
      { '@type': 'WebSite', '@id': 'https://ex.org/#site', name: 'Example Site' },
      { '@type': 'Person', '@id': 'https://ex.org/#ann', name: 'Ann Berg' },
      {
        '@type': ['Article', 'NewsArticle'],
        author: [{ '@id': 'https://ex.org/#ann' }, 'By Tom Ruiz', 'https://ex.org/authors/x'],
        datePublished: '2020-01-02T03:04:05Z',
        publisher: { '@type': 'Organization', name: 'Example News' },
      },
    ];
    const got = articleMeta({ ...none, jsonLd, metaAuthor: 'Meta Person', bylineText: 'By Somebody', timeNearTitle: '2021-01-01' });
    assert.deepEqual(got, { author: 'Ann Berg, Tom Ruiz', publishedAt: Date.UTC(2020, 0, 2, 3, 4, 5), siteName: 'Example News' });
  });

  it('then meta tags, article:* OpenGraph, the byline and a <time> near the title; null when the page does not say', () => {
    assert.deepEqual(articleMeta(none), { author: null, publishedAt: null, siteName: null });
    assert.deepEqual(
      articleMeta({ ...none, metaAuthor: 'By Jane Doe', metaPublished: '2019-05-06', applicationName: 'Jane’s Blog' }),
      { author: 'Jane Doe', publishedAt: Date.UTC(2019, 4, 6), siteName: 'Jane’s Blog' },
    );
    assert.deepEqual(
      articleMeta({ ...none, openGraph: { 'article:author': 'https://facebook.com/jane', 'article:published_time': '2019-05-06T07:00:00+02:00', 'og:site_name': 'Blog' }, bylineText: 'Posted by Jane Doe' }),
      { author: 'Jane Doe', publishedAt: Date.UTC(2019, 4, 6, 5), siteName: 'Blog' },
    );
    assert.equal(articleMeta({ ...none, timeNearTitle: '2018-03-04T05:06:07Z' }).publishedAt, Date.UTC(2018, 2, 4, 5, 6, 7));
    // an unparsable JSON-LD date gives way to the next source
    assert.equal(articleMeta({ ...none, jsonLd: [{ '@type': 'BlogPosting', datePublished: 'last week' }], timeNearTitle: '2018-03-04' }).publishedAt, Date.UTC(2018, 2, 4));
  });

  it('from a page: the <time> after the headline, not the one in the site header; the byline element when nothing else names the author', () => {
    const html =
      '<html><head><title>Seals</title></head><body><header><time datetime="2024-06-01">Today</time></header>' +
      '<article><h1>Seals</h1><div class="post-meta"><span class="byline">By <a rel="author" href="/ann">Ann Berg</a></span>' +
      '<time datetime="2019-11-19T08:00:00Z">19 Nov</time></div><p>Seals are back.</p></article></body></html>';
    const r = extractHtml(html, 'https://ex.org/seals');
    assert.equal(r.author, 'Ann Berg');
    assert.equal(r.publishedAt, Date.UTC(2019, 10, 19, 8));
    assert.equal(r.siteName, null);
  });
});
