/**
 * Results for a person or a program: an aligned text table (what `crawl sql`, `crawl status`,
 * `crawl streams` and `crawl dead-letters` print), CSV (RFC 4180, CRLF) or JSON.
 */
import type { QueryResult } from '../pipeline/adapters/duckdb-views.js';

export type ResultFormat = 'table' | 'csv' | 'json';

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v instanceof Date) return v.toISOString();
  return JSON.stringify(v, jsonReplacer);
}

function jsonReplacer(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}

/** Terminal column width of one code point (CJK/fullwidth/emoji = 2, combining = 0). */
function charWidth(cp: number): number {
  if (cp === 0x200b || cp === 0x200d || (cp >= 0x0300 && cp <= 0x036f) || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += charWidth(ch.codePointAt(0)!);
  return w;
}

const MAX_CELL = 80;

/** Table-mode cell: control chars escaped (keeps alignment), truncated to `maxWidth` columns. */
function tableCell(v: unknown, maxWidth = MAX_CELL, nullText = 'NULL'): string {
  if (v === null || v === undefined) return nullText;
  const s = cellText(v).replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
  if (displayWidth(s) <= maxWidth) return s;
  let out = '';
  let w = 0;
  for (const ch of s) {
    const cw = charWidth(ch.codePointAt(0)!);
    if (w + cw > maxWidth - 1) break;
    out += ch;
    w += cw;
  }
  return out + '…';
}

function pad(s: string, width: number, right: boolean): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(s)));
  return right ? fill + s : s + fill;
}

function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = cellText(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function formatResult(result: QueryResult, format: ResultFormat): string {
  const { columns, rows } = result;
  switch (format) {
    case 'csv': {
      const lines = [columns.map(csvField).join(',')];
      for (const r of rows) lines.push(columns.map((_, i) => csvField(r[i])).join(','));
      return lines.join('\r\n') + '\r\n';
    }
    case 'json': {
      // Duplicate column names (e.g. SELECT a.x, b.x) get a numeric suffix so no value is lost.
      const seen = new Map<string, number>();
      const keys = columns.map((c) => {
        const n = seen.get(c) ?? 0;
        seen.set(c, n + 1);
        return n === 0 ? c : `${c}_${n}`;
      });
      const objs = rows.map((r) => {
        const o: Record<string, unknown> = {};
        keys.forEach((k, i) => (o[k] = r[i] === undefined ? null : r[i]));
        return o;
      });
      return JSON.stringify(objs, jsonReplacer, 2) + '\n';
    }
    case 'table':
      return formatTable(columns, rows, { footer: `(${rows.length} ${rows.length === 1 ? 'row' : 'rows'})` });
    default: {
      const never: never = format;
      throw new Error(`unknown format: ${String(never)}`);
    }
  }
}

export interface TableOptions {
  /** the line under the table, e.g. `(3 rows)` */
  footer: string;
  /** cells are cut to this many terminal columns (default 80), per column index */
  maxWidth?: Partial<Record<number, number>>;
  /** what an empty cell shows (default NULL) */
  nullText?: string;
}

/** Columns separated by ` | `, numbers aligned right, control characters escaped, long cells cut with … */
export function formatTable(columns: readonly string[], rows: readonly unknown[][], o: TableOptions): string {
  const header = columns.map((c) => tableCell(c));
  const body = rows.map((r) => columns.map((_, i) => tableCell(r[i], o.maxWidth?.[i] ?? MAX_CELL, o.nullText)));
  const numeric = columns.map((_, i) => rows.length > 0 && rows.every((r) => r[i] === null || r[i] === undefined || typeof r[i] === 'number' || typeof r[i] === 'bigint'));
  const widths = header.map((h, i) => Math.max(displayWidth(h), ...body.map((b) => displayWidth(b[i]!))));
  const line = (cells: string[], isHeader: boolean): string =>
    cells
      .map((c, i) => pad(c, widths[i]!, !isHeader && numeric[i]!))
      .join(' | ')
      .trimEnd();
  const out: string[] = [];
  if (columns.length > 0) {
    out.push(line(header, true));
    out.push(widths.map((w) => '-'.repeat(w)).join('-+-'));
    for (const b of body) out.push(line(b, false));
  }
  out.push(o.footer);
  return out.join('\n') + '\n';
}

/** A value as one terminal line: control characters escaped, cut to `width` columns with … */
export const oneLine = (v: string | number | null, width: number): string => tableCell(v, width, '-');
