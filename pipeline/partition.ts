import { hash as hashOf } from 'node:crypto';
import { partitionSubject, type SubjectName } from '../topology/index.js';

/**
 * Stable partition of a host: FNV-1a 32-bit hash mod P. Every URL of a host travels one
 * partition (`crawl.<subject>.<partition>`), so per-host state has one natural owner.
 * The hash must never change: it decides subjects of retained messages.
 */
export function partitionOf(host: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < host.length; i++) {
    hash ^= host.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % partitions;
}

/** The subject of `name` on the partition of `host`: `crawl.fetched.3`. */
export function subjectFor(name: SubjectName, host: string, partitions: number): string {
  return partitionSubject(name, partitionOf(host, partitions));
}

/**
 * A queue of one host: `crawl.hostq.<p>.<hostkey>` for its default lane, and
 * `crawl.hostq.<p>.<hostkey>.<lane>` for the others (a priority level, and a crawl job:
 * stages/shared/politeness/host-lanes.ts). The key is a hash, since a host name has dots
 * (and may be an IPv6 literal) and a subject token may not; a lane is made of letters,
 * digits and dashes.
 */
export function hostQueueSubject(host: string, partitions: number, lane = ''): string {
  const base = `${partitionSubject('hostq', partitionOf(host, partitions))}.${hashOf('sha1', host, 'hex').slice(0, 20)}`;
  return lane === '' ? base : `${base}.${lane}`;
}
