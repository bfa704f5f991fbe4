import { edgesPublishedBy, stageInput } from '../../topology/index.js';

/**
 * seen-filter: candidates in; URLs never admitted before out to the politeness gate.
 * Partitioned: one durable per partition (`seen-filter-p<N>` on `crawl.normalized.<N>`),
 * consumed only by the process holding that partition's lease.
 */
export const seenFilterInput = stageInput('seen-filter');
export const seenFilterEmits = edgesPublishedBy('seen-filter');

/** A partition's seen set is saved after this many new URLs... */
export const SNAPSHOT_EVERY_URLS = 100_000;
/** ...or this long after the last save if anything changed: bounds the replay after a crash. */
export const SNAPSHOT_EVERY_MS = 30_000;
