/**
 * A stage's durable consumer as the server holds it: which stream, which subjects, how long
 * an ack may take, how many messages may be out at once. Derived from the stage's entry in
 * the topology (topology/stages.ts); ops/nats/topology.ts applies it to a server and the
 * runner binds to it.
 */
export interface StageInputSpec {
  stream: string;
  /** durable consumer name: the stage's name */
  durable: string;
  /** subjects this consumer reads; empty = the whole stream */
  filterSubject: string;
  /** how long the server waits for an ack before redelivering; the runner sends `working()` while a handler runs */
  ackWaitMs: number;
  /** upper bound on unacked messages for all instances together (includes messages waiting on a delayed nak) */
  maxAckPending: number;
  /** one durable per partition (`partitionInput`) instead of one for the stage: declared once the partition count is known */
  partitioned?: boolean;
}

/** The consumer of one partition of a partitioned stage: `seen-filter-p3` on `crawl.normalized.3`. */
export function partitionInput(spec: StageInputSpec, partition: number): StageInputSpec {
  return { ...spec, durable: `${spec.durable}-p${partition}`, filterSubject: spec.filterSubject.replace(/\*$/, String(partition)) };
}
