/**
 * The report page from figures alone: what a crawled string can do to it (nothing: escaped,
 * and a policy that loads nothing), the numbers a reader sees for edge cases, and the time axis.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bucketWidthMs, reportHtml, type ReportFigures } from '../../app/report/index.js';
import { formatBytes, formatDuration, formatElapsed, formatShare } from '../../app/report/format.js';
import { niceCeil, niceCeilBytes, niceCeilCount } from '../../app/report/svg-charts.js';

const T = Date.UTC(2026, 0, 2, 3, 4, 5);

function figures(over: Partial<ReportFigures> = {}): ReportFigures {
  return {
    crawlIds: ['c1'],
    firstEventMs: T,
    lastEventMs: T + 4000,
    durationMs: 4000,
    pages: 3,
    hostsWithPages: 1,
    hostsSeen: 2,
    domains: 1,
    errors: 1,
    requests: 4,
    failedRequests: 1,
    bytesStored: 3000,
    warcBytes: 2000,
    outcomes: [{ label: 'fetched', count: 3 }, { label: 'http_error', count: 1 }],
    errorReasons: [{ label: 'http 404', outcome: 'http_error', count: 1 }],
    errorHosts: [{ host: 'a.test', errors: 1, pages: 3 }],
    statusClasses: [{ label: '2xx', count: 3 }, { label: '4xx', count: 1 }],
    timeline: { startMs: T, bucketMs: 1000, pages: [1, 0, 1, 0, 1], failedRequests: [0, 0, 1, 0, 0], domainsCovered: [1, 1, 1, 1, 1], bytesStored: [1000, 1000, 2000, 2000, 3000] },
    ...over,
  };
}

describe('crawl report page', () => {
  it('escapes crawled text everywhere and loads nothing: no script, a policy that forbids any fetch', () => {
    const hostile = '"><script>alert(1)</script><img src=http://127.0.0.1:1/x>';
    const html = reportHtml(figures({ errorHosts: [{ host: hostile, errors: 1, pages: 0 }], errorReasons: [{ label: hostile, outcome: 'http_error', count: 1 }] }), {
      out: `/tmp/out '<b>`,
      generatedAt: new Date(T),
    });
    assert.doesNotMatch(html, /<script|<img|<b>/i);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">/);
    assert.doesNotMatch(html, /\b(src|href)="(https?:|\/\/)/, 'no resource from anywhere');
    // the shell line quotes the path as a shell would need it
    assert.match(html, /crawl sql --out &#39;\/tmp\/out &#39;\\&#39;&#39;&lt;b&gt;&#39;/);
  });

  it('every chart is an image with a name and description, and its numbers are in a table', () => {
    const html = reportHtml(figures(), { out: '/tmp/out', generatedAt: new Date(T) });
    const svgs = [...html.matchAll(/<svg class="chart" id="([^"]+)" role="img" aria-labelledby="([^"]+)"/g)];
    assert.equal(svgs.length, 7);
    for (const [, id, labelledBy] of svgs) {
      assert.equal(labelledBy, `${id}-title ${id}-desc`);
      assert.match(html, new RegExp(`<title id="${id}-title">[^<]+</title><desc id="${id}-desc">[^<]+</desc>`));
    }
    assert.equal((html.match(/<details><summary>/g) ?? []).length, 7);
    assert.match(html, /<nav aria-label="Charts">/);
    // a category with a colour has a pattern too
    assert.match(html, /<pattern id="chart-status-classes-dots"/);
    assert.match(html, /fill="url\(#chart-status-classes-dots\)"/);
  });

  it('figures of nothing read as zeros and sentences, never NaN', () => {
    const html = reportHtml(
      figures({ firstEventMs: null, lastEventMs: null, durationMs: 0, pages: 0, hostsWithPages: 0, hostsSeen: 0, domains: 0, errors: 0, requests: 0, failedRequests: 0, bytesStored: 0, warcBytes: 0, outcomes: [], errorReasons: [], errorHosts: [], statusClasses: [], timeline: null, crawlIds: [] }),
      { out: '/tmp/out', generatedAt: new Date(T) },
    );
    assert.doesNotMatch(html, /NaN|undefined|Infinity|null/);
    assert.match(html, /0 of 0 requests failed \(0 %\)/);
    assert.match(html, /No page was stored: no rate to chart\./);
  });

  it('the time axis: at most 60 buckets of a width one can count in', () => {
    assert.equal(bucketWidthMs(0), 1000);
    assert.equal(bucketWidthMs(59_000), 1000);
    assert.equal(bucketWidthMs(61_000), 2000);
    assert.equal(bucketWidthMs(3_600_000), 60_000);
    assert.equal(bucketWidthMs(3_600_001), 120_000);
    assert.equal(bucketWidthMs(30 * 86_400_000), 43_200_000);
    assert.equal(bucketWidthMs(365 * 86_400_000), 7 * 86_400_000);
    assert.deepEqual([0, 0.3, 1, 1.2, 2.2, 3, 7, 42, 101].map(niceCeil), [1, 0.5, 1, 2, 2.5, 5, 10, 50, 200]);
    assert.equal(niceCeilBytes(2.8 * 1024 * 1024), 5 * 1024 * 1024);
    assert.deepEqual([0, 1, 2, 3, 5, 42].map(niceCeilCount), [2, 2, 2, 6, 6, 50]);
  });

  it('numbers as a reader says them', () => {
    assert.equal(formatShare(1, 3), '33.3 %');
    assert.equal(formatShare(0, 0), '0 %');
    assert.equal(formatBytes(0), '0 bytes');
    assert.equal(formatBytes(1536), '1.5 KiB');
    assert.equal(formatDuration(999), '999 ms');
    assert.equal(formatDuration(185_000), '3 min 5 s');
    assert.equal(formatDuration(7_800_000), '2 h 10 min');
    assert.equal(formatElapsed(90_000), '1:30');
    assert.equal(formatElapsed(3_723_000), '1:02:03');
  });
});
