import { createHash } from 'node:crypto';

/** Short stable ids (hex of SHA-256): the same input always gives the same id, so redelivery is idempotent. */
export function stableId(...parts: Array<string | number>): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
}

/** Jitter keeps many waiting messages from being redelivered at the same instant. */
export function jitter(maxMs: number): number {
  return Math.floor(Math.random() * maxMs);
}
