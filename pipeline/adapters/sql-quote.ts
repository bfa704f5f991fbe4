/** SQL literals and identifiers for the statements built here (DuckDB's quoting, which is standard SQL's). */

/** it's -> 'it''s' */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** my "table" -> "my ""table""" */
export function sqlIdent(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}
