/**
 * Inline SVG charts for the report: horizontal bars for counts by kind, and bars or a line over
 * time. Every value is also written as text (on the bar, in a tooltip `<title>`, and in the
 * table the page puts under each chart), so no chart needs colour to be read; the categories
 * that do get colours also get a pattern each. The SVG is an image with a name and a
 * description (role="img", aria-labelledby its `<title>` and `<desc>`) for screen readers.
 */
import { esc, formatElapsed } from './format.js';

const WIDTH = 760;

export interface BarRow {
  label: string;
  value: number;
  /** what is written beside the bar: the count, and a share */
  valueText: string;
  /** a fill pattern from PATTERNS, so that a category is told apart without its colour */
  pattern?: PatternName;
}

export type PatternName = 'solid' | 'hatch' | 'dots' | 'cross' | 'stripes';

/** The patterns' tiles (8 × 8), drawn in the fill colour of their category over a pale ground. */
const PATTERN_TILES: Record<Exclude<PatternName, 'solid'>, string> = {
  hatch: '<path d="M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4" stroke-width="2"/>',
  dots: '<circle cx="4" cy="4" r="2"/>',
  cross: '<path d="M0,0 l8,8 M8,0 l-8,8" stroke-width="1.5"/>',
  stripes: '<path d="M0,2 h8 M0,6 h8" stroke-width="2"/>',
};

function svgOpen(id: string, title: string, desc: string, height: number): string {
  return (
    `<svg class="chart" id="${esc(id)}" role="img" aria-labelledby="${esc(id)}-title ${esc(id)}-desc" viewBox="0 0 ${WIDTH} ${height}" ` +
    `preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="${esc(id)}-title">${esc(title)}</title><desc id="${esc(id)}-desc">${esc(desc)}</desc>`
  );
}

function patternDefs(id: string, rows: readonly BarRow[]): string {
  const used = [...new Set(rows.map((r) => r.pattern).filter((p): p is Exclude<PatternName, 'solid'> => p !== undefined && p !== 'solid'))];
  if (used.length === 0) return '';
  const defs = used.map(
    (p) =>
      `<pattern id="${esc(id)}-${p}" class="pattern-${p}" width="8" height="8" patternUnits="userSpaceOnUse">` +
      `<rect width="8" height="8" class="pattern-ground"/><g class="pattern-ink">${PATTERN_TILES[p]}</g></pattern>`,
  );
  return `<defs>${defs.join('')}</defs>`;
}

function shorten(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, max - 1) + '…';
}

/** Horizontal bars, one a row, each with its label on the left and its value on the right. */
export function barChart(id: string, title: string, desc: string, rows: readonly BarRow[], opts: { labelWidth?: number } = {}): string {
  const labelWidth = opts.labelWidth ?? 230;
  const barMax = WIDTH - labelWidth - 150;
  const rowHeight = 28;
  const height = rows.length * rowHeight + 8;
  const max = Math.max(1, ...rows.map((r) => r.value));
  const parts = [svgOpen(id, title, desc, height), patternDefs(id, rows)];
  rows.forEach((r, i) => {
    const y = 4 + i * rowHeight;
    // a count above zero keeps a visible bar however small its share
    const w = r.value <= 0 ? 0 : Math.max(2, (r.value / max) * barMax);
    const fill = r.pattern && r.pattern !== 'solid' ? ` fill="url(#${esc(id)}-${r.pattern})"` : '';
    const cls = r.pattern ? `bar bar-${r.pattern}` : 'bar';
    parts.push(
      `<g class="bar-row"><title>${esc(`${r.label}: ${r.valueText}`)}</title>` +
        `<text class="label" x="${labelWidth - 8}" y="${y + 18}" text-anchor="end">${esc(shorten(r.label, Math.floor(labelWidth / 7.2)))}</text>` +
        `<rect class="${cls}"${fill} x="${labelWidth}" y="${y + 4}" width="${w.toFixed(1)}" height="18" rx="2"/>` +
        `<text class="value" x="${(labelWidth + w + 6).toFixed(1)}" y="${y + 18}">${esc(r.valueText)}</text></g>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}

/** The smallest of 1, 2, 2.5, 5 × 10^k at or above n (1 for nothing), so that axis ticks are round. */
export function niceCeil(n: number): number {
  if (!(n > 0) || !Number.isFinite(n)) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= n - 1e-9 * p) return m * p;
  return 10 * p;
}

/** An axis top for counts: an even whole number, so that the half-way tick is a whole number too. */
export function niceCeilCount(n: number): number {
  const top = Math.max(2, Math.ceil(niceCeil(n)));
  return top % 2 === 0 ? top : top + 1;
}

/** niceCeil in the binary unit of the value (KiB, MiB…), so that a bytes axis reads 2 MiB, not 1.9 MiB. */
export function niceCeilBytes(n: number): number {
  let unit = 1;
  while (n / unit >= 1024) unit *= 1024;
  return niceCeil(n / unit) * unit;
}

export interface TimeSeries {
  startMs: number;
  bucketMs: number;
  values: readonly number[];
  kind: 'bars' | 'line';
  /** an axis tick's text */
  formatValue: (n: number) => string;
  /** the y axis's name: "pages per second" */
  yLabel: string;
  /** a bucket's tooltip: "0:10–0:15: 12 pages, 2.4 pages/s" */
  describe: (i: number) => string;
  /** the top of the y axis for the largest value (default niceCeil; bytes round in powers of 1024) */
  axisTop?: (max: number) => number;
}

const PLOT = { left: 78, right: WIDTH - 16, top: 14, bottom: 210 };
const TIME_HEIGHT = 252;

/** Values over the crawl's time: one bar a bucket, or a line through the buckets with a marker each. */
export function timeChart(id: string, title: string, desc: string, s: TimeSeries): string {
  const n = Math.max(1, s.values.length);
  const top = (s.axisTop ?? niceCeil)(Math.max(0, ...s.values));
  const plotW = PLOT.right - PLOT.left;
  const plotH = PLOT.bottom - PLOT.top;
  const x = (i: number) => PLOT.left + (i / n) * plotW;
  const y = (v: number) => PLOT.bottom - (Math.max(0, v) / top) * plotH;
  const parts = [svgOpen(id, title, desc, TIME_HEIGHT)];
  // axes: three y ticks (0, half, top), and up to seven time ticks on bucket edges
  parts.push('<g class="axis">');
  for (const v of [0, top / 2, top]) {
    parts.push(
      `<line class="grid" x1="${PLOT.left}" x2="${PLOT.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/>` +
        `<text x="${PLOT.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${esc(s.formatValue(v))}</text>`,
    );
  }
  const step = Math.max(1, Math.ceil(n / 6));
  for (let i = 0; i <= n; i += step) {
    parts.push(
      `<line class="tick" x1="${x(i).toFixed(1)}" x2="${x(i).toFixed(1)}" y1="${PLOT.bottom}" y2="${PLOT.bottom + 5}"/>` +
        `<text x="${x(i).toFixed(1)}" y="${PLOT.bottom + 18}" text-anchor="middle">${esc(formatElapsed(i * s.bucketMs))}</text>`,
    );
  }
  parts.push(`<line class="baseline" x1="${PLOT.left}" x2="${PLOT.right}" y1="${PLOT.bottom}" y2="${PLOT.bottom}"/>`);
  parts.push(`<text class="axis-name" x="${PLOT.left}" y="${TIME_HEIGHT - 6}">time since the first event (h:mm:ss)</text>`);
  parts.push(`<text class="axis-name" transform="translate(14 ${PLOT.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(s.yLabel)}</text>`);
  parts.push('</g>');

  if (s.kind === 'bars') {
    const w = Math.max(1, plotW / n - 2);
    s.values.forEach((v, i) => {
      const h = PLOT.bottom - y(v);
      parts.push(
        `<rect class="bar" x="${(x(i) + 1).toFixed(1)}" y="${y(v).toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}"><title>${esc(s.describe(i))}</title></rect>`,
      );
    });
  } else {
    const cx = (i: number) => x(i) + plotW / n / 2;
    const d = s.values.map((v, i) => `${i === 0 ? 'M' : 'L'}${cx(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    // one bucket is a point: a flat stroke across it shows where it is
    const path = s.values.length === 1 ? `M${x(0).toFixed(1)},${y(s.values[0]!).toFixed(1)} H${x(1).toFixed(1)}` : d;
    parts.push(`<path class="line" d="${path}" fill="none"/>`);
    s.values.forEach((v, i) => {
      parts.push(`<circle class="marker" cx="${cx(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3"><title>${esc(s.describe(i))}</title></circle>`);
    });
  }
  parts.push('</svg>');
  return parts.join('');
}
