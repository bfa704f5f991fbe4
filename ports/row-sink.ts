/**
 * The row sink port: where the persist and archive stages' rows go. `write` stores a batch
 * (rows of one or more tables, by table name) durably and whole: once it resolves, the rows
 * survive a crash; a write that fails leaves nothing a reader sees, and the stage's messages
 * are redelivered. Adapter: Parquet files through DuckDB, in a local directory or an object
 * store (pipeline/adapters/parquet/).
 */
export interface RowSink<Batch> {
  write(batch: Batch): Promise<unknown>;
  close(): Promise<void>;
}
