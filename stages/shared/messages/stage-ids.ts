import { hash } from 'node:crypto';

/**
 * Short stable ids (hex of SHA-256): the same input always gives the same id, so redelivery is
 * idempotent. `crypto.hash` makes no Hash object: on a URL-sized input it takes about a third
 * of `createHash(...).update(...).digest()`'s time, and ids, pattern keys and host-queue
 * subjects are hashed several times for each new URL.
 */
export function stableId(...parts: Array<string | number>): string {
  return hash('sha256', parts.join('\u0000'), 'hex').slice(0, 32);
}

/** Jitter keeps many waiting messages from being redelivered at the same instant. */
export function jitter(maxMs: number): number {
  return Math.floor(Math.random() * maxMs);
}
