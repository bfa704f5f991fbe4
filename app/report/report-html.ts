/**
 * The report page: one HTML document with its CSS and SVG inline and no script, which opens
 * from disk with no server and no network (its Content-Security-Policy forbids any load, so
 * a crawled string that slipped through escaping could fetch nothing either). Each chart has
 * a heading, a sentence on what it shows, and its numbers as a table in a <details>.
 */
import type { Count, ReportFigures, Timeline } from './figures.js';
import { barChart, niceCeilBytes, niceCeilCount, timeChart, type BarRow, type PatternName } from './svg-charts.js';
import { esc, formatBytes, formatCount, formatDuration, formatElapsed, formatRate, formatShare, formatTime } from './format.js';
import { REPORT_CSS } from './report-css.js';

export interface ReportMeta {
  /** the output the figures are of: a directory or s3:// URL */
  out: string;
  generatedAt: Date;
}

interface Section {
  id: string;
  heading: string;
  /** what the chart shows, one or two sentences */
  about: string;
  /** the SVG, or a sentence saying why there is none */
  chart: string | null;
  empty: string;
  table: { caption: string; head: string[]; rows: string[][] };
}

const STATUS_PATTERNS: Record<string, PatternName> = { '2xx': 'solid', '3xx': 'hatch', '4xx': 'dots', '5xx': 'cross', 'no response': 'stripes' };
const STATUS_NAMES: Record<string, string> = {
  '1xx': 'informational',
  '2xx': 'success',
  '3xx': 'redirect',
  '4xx': 'client error',
  '5xx': 'server error',
};

export function reportHtml(f: ReportFigures, meta: ReportMeta): string {
  const sections = [
    pagesPerSecond(f),
    outcomes(f),
    errorReasons(f),
    errorHosts(f),
    domainsCovered(f),
    bytesStored(f),
    statusClasses(f),
  ];
  const nothing = f.pages === 0 && f.outcomes.length === 0;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Crawl report: ${esc(meta.out)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<a class="skip" href="#main">Skip to the report</a>
<header>
<h1>Crawl report</h1>
<p class="meta">${esc(meta.out)}${f.crawlIds.length > 0 ? ` · crawl ${f.crawlIds.map(esc).join(', ')}` : ''}${
    f.firstEventMs !== null && f.lastEventMs !== null ? ` · ${esc(formatTime(f.firstEventMs))} to ${esc(formatTime(f.lastEventMs))}` : ''
  } · made ${esc(formatTime(meta.generatedAt.getTime()))}</p>
<nav aria-label="Charts"><ul>${sections.map((s) => `<li><a href="#${s.id}">${esc(s.heading)}</a></li>`).join('')}</ul></nav>
</header>
<main id="main">
${nothing ? '<p class="empty" role="status">This output has no pages and no outcomes yet: there is nothing to chart. Run a crawl with this --out, then make the report again.</p>\n' : ''}${headline(f)}
${sections.map(sectionHtml).join('\n')}
</main>
<footer><p>Made by <code>crawl report</code>. Every number is a query over the output's views: <code>crawl sql --out ${esc(quoteArg(meta.out))}</code> answers the same.</p></footer>
</body>
</html>
`;
}

function quoteArg(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function headline(f: ReportFigures): string {
  const seconds = f.durationMs / 1000;
  // a crawl that lasted under a second is counted as one second: a rate, not a division by zero
  const rate = f.pages / Math.max(1, seconds);
  const items: Array<[string, string, string]> = [
    ['Pages stored', formatCount(f.pages), `${formatRate(rate)} pages/s on average`],
    ['Hosts', formatCount(f.hostsWithPages), `with a stored page, of ${formatCount(f.hostsSeen)} seen`],
    ['Registrable domains', formatCount(f.domains), 'with a stored page'],
    ['Duration', formatDuration(f.durationMs), 'first event to last'],
    ['Errors', formatCount(f.errors), `URLs ended in an error; ${formatCount(f.failedRequests)} of ${formatCount(f.requests)} requests failed (${formatShare(f.failedRequests, f.requests)})`],
    ['Bytes stored', formatBytes(f.bytesStored), `page bodies; ${formatBytes(f.warcBytes)} of WARC records`],
  ];
  return (
    `<section aria-labelledby="headline-heading"><h2 id="headline-heading">In numbers</h2><dl class="headline">` +
    items.map(([k, v, note]) => `<div><dt>${esc(k)}</dt><dd><span class="big">${esc(v)}</span> <span class="note">${esc(note)}</span></dd></div>`).join('') +
    `</dl></section>`
  );
}

/** A cell that is a number (a count, a rate, a share, a size): aligned right, digits in columns. */
const NUMERIC = /^[\d,.]+( %| bytes| [KMGTP]iB)?$/;

function sectionHtml(s: Section): string {
  const table =
    s.table.rows.length === 0
      ? ''
      : `<details><summary>${esc(s.table.caption)} as a table</summary><table><caption>${esc(s.table.caption)}</caption>` +
        `<thead><tr>${s.table.head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>` +
        s.table.rows.map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${esc(c)}</th>` : NUMERIC.test(c) ? `<td class="num">${esc(c)}</td>` : `<td>${esc(c)}</td>`)).join('')}</tr>`).join('') +
        `</tbody></table></details>`;
  return (
    `<section id="${s.id}" aria-labelledby="${s.id}-heading"><h2 id="${s.id}-heading">${esc(s.heading)}</h2><p>${esc(s.about)}</p>` +
    (s.chart === null ? `<p class="empty">${esc(s.empty)}</p>` : `<figure>${s.chart}</figure>`) +
    table +
    `</section>`
  );
}

function bucketLabel(t: Timeline, i: number): string {
  return `${formatElapsed(i * t.bucketMs)}–${formatElapsed((i + 1) * t.bucketMs)}`;
}

function pagesPerSecond(f: ReportFigures): Section {
  const t = f.timeline;
  const perSecond = (n: number) => n / ((t?.bucketMs ?? 1000) / 1000);
  const peak = t ? Math.max(...t.pages.map(perSecond)) : 0;
  const title = 'Pages stored per second over time';
  const desc = t ? `${formatCount(f.pages)} pages in ${formatDuration(f.durationMs)}, ${t.pages.length} intervals of ${formatDuration(t.bucketMs)}; the busiest at ${formatRate(peak)} pages/s.` : '';
  return {
    id: 'pages-per-second',
    heading: 'Pages per second',
    about: `Pages stored in each interval of ${t ? formatDuration(t.bucketMs) : 'time'}, per second, from the crawl's first event to its last; the table also has each interval's failed requests.`,
    chart:
      t && f.pages > 0
        ? timeChart('chart-pages-per-second', title, desc, {
            startMs: t.startMs,
            bucketMs: t.bucketMs,
            values: t.pages.map(perSecond),
            kind: 'bars',
            yLabel: 'pages per second',
            formatValue: formatRate,
            describe: (i) => `${bucketLabel(t, i)}: ${formatCount(t.pages[i]!)} pages, ${formatRate(perSecond(t.pages[i]!))} pages/s`,
          })
        : null,
    empty: 'No page was stored: no rate to chart.',
    table: {
      caption: 'Pages per interval',
      head: ['interval (h:mm:ss)', 'pages', 'pages/s', 'failed requests'],
      rows: t ? t.pages.map((n, i) => [bucketLabel(t, i), formatCount(n), formatRate(perSecond(n)), formatCount(t.failedRequests[i]!)]) : [],
    },
  };
}

function countRows(counts: readonly Count[], total: number): BarRow[] {
  return counts.map((c) => ({ label: c.label, value: c.count, valueText: `${formatCount(c.count)} (${formatShare(c.count, total)})` }));
}

function outcomes(f: ReportFigures): Section {
  const total = f.outcomes.reduce((a, c) => a + c.count, 0);
  return {
    id: 'outcomes',
    heading: 'Outcomes',
    about:
      'What became of each URL the crawl took in, one row of fetch_log each: fetched, not_modified (a 304), redirect, the errors (http_error, network_error, refused), robots_disallowed, filtered (with its reason: scope, budgets, traps), unsupported_content; retry counts each attempt that was tried again.',
    chart: f.outcomes.length > 0 ? barChart('chart-outcomes', 'Outcomes', `${formatCount(total)} outcomes: ${f.outcomes.map((c) => `${c.label} ${formatCount(c.count)}`).join(', ')}.`, countRows(f.outcomes, total)) : null,
    empty: 'No outcome was recorded.',
    table: { caption: 'Outcomes', head: ['outcome', 'rows', 'share'], rows: f.outcomes.map((c) => [c.label, formatCount(c.count), formatShare(c.count, total)]) },
  };
}

function errorReasons(f: ReportFigures): Section {
  const rows = f.errorReasons.slice(0, 12);
  return {
    id: 'error-reasons',
    heading: 'Errors by reason',
    about: "The URLs that ended in an error, by the first words of their reason (the HTTP status, or the network failure: timeout, reset, DNS…). The table lists every reason with its outcome; fetch_log's reason column has the details.",
    chart:
      rows.length > 0
        ? barChart('chart-error-reasons', 'Errors by reason', `${formatCount(f.errors)} errors: ${rows.map((r) => `${r.label} ${formatCount(r.count)}`).join(', ')}.`, countRows(rows, f.errors))
        : null,
    empty: 'No URL ended in an error.',
    table: { caption: 'Errors by reason', head: ['reason', 'outcome', 'URLs', 'share'], rows: f.errorReasons.map((r) => [r.label, r.outcome, formatCount(r.count), formatShare(r.count, f.errors)]) },
  };
}

function errorHosts(f: ReportFigures): Section {
  return {
    id: 'error-hosts',
    heading: 'Top error hosts',
    about: 'The hosts with the most URLs that ended in an error (at most ten), beside the pages each had stored.',
    chart:
      f.errorHosts.length > 0
        ? barChart(
            'chart-error-hosts',
            'Top error hosts',
            `${f.errorHosts.map((h) => `${h.host}: ${formatCount(h.errors)} errors, ${formatCount(h.pages)} pages`).join('; ')}.`,
            f.errorHosts.map((h) => ({ label: h.host, value: h.errors, valueText: `${formatCount(h.errors)} errors, ${formatCount(h.pages)} pages` })),
            { labelWidth: 260 },
          )
        : null,
    empty: 'No host had an error.',
    table: { caption: 'Top error hosts', head: ['host', 'errors', 'pages stored'], rows: f.errorHosts.map((h) => [h.host, formatCount(h.errors), formatCount(h.pages)]) },
  };
}

function domainsCovered(f: ReportFigures): Section {
  const t = f.timeline;
  return {
    id: 'domains-covered',
    heading: 'Registrable domains covered',
    about: 'Registrable domains (example.co.uk for www.example.co.uk) with at least one stored page, counted from each one’s first page: how fast the crawl went broad.',
    chart:
      t && f.domains > 0
        ? timeChart('chart-domains-covered', 'Registrable domains covered over time', `${formatCount(f.domains)} registrable domains by the end, in ${formatDuration(f.durationMs)}.`, {
            startMs: t.startMs,
            bucketMs: t.bucketMs,
            values: t.domainsCovered,
            kind: 'line',
            yLabel: 'registrable domains',
            formatValue: (n) => formatCount(n),
            axisTop: niceCeilCount,
            describe: (i) => `by ${formatElapsed((i + 1) * t.bucketMs)}: ${formatCount(t.domainsCovered[i]!)} domains`,
          })
        : null,
    empty: 'No page was stored: no domain is covered.',
    table: {
      caption: 'Registrable domains covered',
      head: ['by (h:mm:ss)', 'domains'],
      rows: t ? t.domainsCovered.map((n, i) => [formatElapsed((i + 1) * t.bucketMs), formatCount(n)]) : [],
    },
  };
}

function bytesStored(f: ReportFigures): Section {
  const t = f.timeline;
  return {
    id: 'bytes-stored',
    heading: 'Bytes stored',
    about: `The bytes of the stored pages' bodies as they came in (${formatBytes(f.bytesStored)} in all). The WARC files hold every archived exchange, compressed: ${formatBytes(f.warcBytes)}.`,
    chart:
      t && f.pages > 0
        ? timeChart('chart-bytes-stored', 'Bytes of stored pages over time', `${formatBytes(f.bytesStored)} of page bodies by the end.`, {
            startMs: t.startMs,
            bucketMs: t.bucketMs,
            values: t.bytesStored,
            kind: 'line',
            yLabel: 'bytes stored',
            formatValue: formatBytes,
            axisTop: niceCeilBytes,
            describe: (i) => `by ${formatElapsed((i + 1) * t.bucketMs)}: ${formatBytes(t.bytesStored[i]!)}`,
          })
        : null,
    empty: 'No page was stored: no bytes to chart.',
    table: {
      caption: 'Bytes stored',
      head: ['by (h:mm:ss)', 'bytes', 'readable'],
      rows: t ? t.bytesStored.map((n, i) => [formatElapsed((i + 1) * t.bucketMs), formatCount(n), formatBytes(n)]) : [],
    },
  };
}

function statusClasses(f: ReportFigures): Section {
  const total = f.statusClasses.reduce((a, c) => a + c.count, 0);
  const label = (c: string) => `${c} ${STATUS_NAMES[c] ?? ''}`.trim();
  return {
    id: 'status-classes',
    heading: 'HTTP status classes',
    about: 'Every request by the class of the HTTP status it got, retried attempts included; "no response" is a request that failed before a status (timeout, reset, DNS).',
    chart:
      f.statusClasses.length > 0
        ? barChart(
            'chart-status-classes',
            'HTTP status classes',
            `${formatCount(total)} requests: ${f.statusClasses.map((c) => `${c.label} ${formatCount(c.count)}`).join(', ')}.`,
            f.statusClasses.map((c) => ({ label: label(c.label), value: c.count, valueText: `${formatCount(c.count)} (${formatShare(c.count, total)})`, pattern: STATUS_PATTERNS[c.label] ?? 'solid' })),
          )
        : null,
    empty: 'No request was made.',
    table: { caption: 'HTTP status classes', head: ['class', 'requests', 'share'], rows: f.statusClasses.map((c) => [label(c.label), formatCount(c.count), formatShare(c.count, total)]) },
  };
}
