/**
 * Rows as DuckDB values: each value checked against its column and converted (a bad row
 * rejects the whole batch, naming the table, row and column), the rows sorted for a file
 * (FILE_SORT_KEYS) and grouped by crawl, each group a file of its own.
 */
import { DuckDBTimestampValue, type DuckDBAppender } from '@duckdb/node-api';
import { FILE_SORT_KEYS, TABLES, type ColumnDef, type DuckDBColumnType, type TableName } from '../../../schemas/output-tables.js';

/** A row had a value that does not fit its column. Nothing of the batch was written. */
export class OutputRowError extends Error {
  constructor(
    readonly table: TableName,
    readonly rowIndex: number,
    readonly column: string,
    message: string,
  ) {
    super(`${table}[${rowIndex}].${column}: ${message}`);
    this.name = 'OutputRowError';
  }
}

export type Appendable = null | string | boolean | number | bigint | DuckDBTimestampValue;

/**
 * What the writer does with one column type: `convert` checks a row's value (throwing a
 * message on a bad one) and turns it into what `append` hands DuckDB. Kept together so a
 * type is described in one place, the check beside the append it makes safe.
 */
interface ColumnType<T extends Exclude<Appendable, null>> {
  convert(v: unknown): T;
  append(a: DuckDBAppender, v: T): void;
}

// the type of each entry's `append` argument is checked against its own `convert` here, then
// forgotten: `appendValue` hands `append` only what `convert` of the same column made
const columnType = <T extends Exclude<Appendable, null>>(t: ColumnType<T>): ColumnType<Exclude<Appendable, null>> => t;

function integerIn(type: 'SMALLINT' | 'INTEGER', lo: number, hi: number): (v: unknown) => number {
  return (v) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) throw new Error(`expected ${type} integer in [${lo}, ${hi}], got ${String(v)}`);
    return v;
  };
}

const COLUMN_TYPES: Record<DuckDBColumnType, ColumnType<Exclude<Appendable, null>>> = {
  VARCHAR: columnType<string>({
    convert: (v) => {
      if (typeof v !== 'string') throw new Error(`expected string, got ${typeof v}`);
      return v;
    },
    append: (a, v) => a.appendVarchar(v),
  }),
  BOOLEAN: columnType<boolean>({
    convert: (v) => {
      if (typeof v !== 'boolean') throw new Error(`expected boolean, got ${typeof v}`);
      return v;
    },
    append: (a, v) => a.appendBoolean(v),
  }),
  SMALLINT: columnType<number>({ convert: integerIn('SMALLINT', -32768, 32767), append: (a, v) => a.appendSmallInt(v) }),
  INTEGER: columnType<number>({ convert: integerIn('INTEGER', -2147483648, 2147483647), append: (a, v) => a.appendInteger(v) }),
  BIGINT: columnType<bigint>({
    convert: (v) => {
      if (typeof v === 'bigint') return v;
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new Error(`expected safe integer, got ${String(v)}`);
      return BigInt(v);
    },
    append: (a, v) => a.appendBigInt(v),
  }),
  DOUBLE: columnType<number>({
    convert: (v) => {
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`expected finite number, got ${String(v)}`);
      return v;
    },
    append: (a, v) => a.appendDouble(v),
  }),
  TIMESTAMP: columnType<DuckDBTimestampValue>({
    convert: (v) => {
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`expected epoch ms number, got ${String(v)}`);
      return new DuckDBTimestampValue(BigInt(Math.trunc(v)) * 1000n);
    },
    append: (a, v) => a.appendTimestamp(v),
  }),
};

/** Validates and converts one value; throws a message string on bad input. */
function convertValue(c: ColumnDef, v: unknown): Appendable {
  if (v === null || v === undefined) {
    if (!c.nullable) throw new Error('is required (got ' + String(v) + ')');
    return null;
  }
  return COLUMN_TYPES[c.type].convert(v);
}

/** Appends a value `convertValue` made for column `c`. */
export function appendValue(a: DuckDBAppender, c: ColumnDef, v: Appendable): void {
  if (v === null) return a.appendNull();
  COLUMN_TYPES[c.type].append(a, v);
}

/** Total order used inside a file: VARCHAR by UTF-8 bytes (= code points, as DuckDB orders), numbers numerically, NULLs last. */
function compareValues(a: Appendable, b: Appendable): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  if (a instanceof DuckDBTimestampValue && b instanceof DuckDBTimestampValue) return a.micros < b.micros ? -1 : a.micros > b.micros ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return 0;
}

function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 code-unit order differs from code-point order only when a surrogate meets U+E000..U+FFFF.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/**
 * Sorts rows in JS (cheap) instead of `ORDER BY` in the COPY (a DuckDB sort
 * materializes every 20 KB text payload); DuckDB keeps insertion order when
 * writing (preserve_insertion_order, on by default and set explicitly).
 */
function sortForFile(table: TableName, values: Appendable[][]): void {
  const cols: readonly ColumnDef[] = TABLES[table];
  const idx = FILE_SORT_KEYS[table].map((k) => cols.findIndex((c) => c.name === k));
  values.sort((r1, r2) => {
    for (const i of idx) {
      const c = compareValues(r1[i]!, r2[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
}

/** A table without a crawl_id column (none today) goes to the partition `crawl=unknown`. */
const NO_CRAWL = 'unknown';

/** Rows grouped by their crawl_id, keeping the sorted order within each group. */
export function byCrawl(table: TableName, values: Appendable[][]): Map<string, Appendable[][]> {
  const i = (TABLES[table] as readonly ColumnDef[]).findIndex((c) => c.name === 'crawl_id');
  const groups = new Map<string, Appendable[][]>();
  for (const row of values) {
    const crawl = i >= 0 && typeof row[i] === 'string' ? (row[i] as string) : NO_CRAWL;
    let g = groups.get(crawl);
    if (!g) groups.set(crawl, (g = []));
    g.push(row);
  }
  return groups;
}


/** A table's rows as values in column order, sorted for their file; throws OutputRowError on the first value that does not fit. */
export function fileValues(table: TableName, rows: ReadonlyArray<Record<string, unknown>>): Appendable[][] {
  const cols: readonly ColumnDef[] = TABLES[table];
  const values: Appendable[][] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const out: Appendable[] = new Array(cols.length);
    for (let j = 0; j < cols.length; j++) {
      const c = cols[j]!;
      try {
        out[j] = convertValue(c, row[c.name]);
      } catch (err) {
        throw new OutputRowError(table, i, c.name, (err as Error).message);
      }
    }
    values[i] = out;
  }
  sortForFile(table, values);
  return values;
}
