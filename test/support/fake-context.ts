/**
 * The in-memory stage context (bench/support/memory-context.ts, shared with the benches) and
 * what unit tests check of a stage's disposition with it.
 */
import assert from 'node:assert/strict';
import type { Emit, Disposition } from '../../pipeline/stage.js';
import type { Published } from '../../ports/streams.js';
import type { FakeContext } from '../../bench/support/memory-context.js';

export * from '../../bench/support/memory-context.js';

// ---------------------------------------------------------------------------------------------
// Looking at dispositions.

/** The messages of an `emit` disposition; fails the test on retry/fail. */
export function emitted(disposition: Disposition): Emit[] {
  assert.equal(disposition.kind, 'emit', `expected an emit disposition, got ${JSON.stringify(disposition)}`);
  return (disposition as Extract<Disposition, { kind: 'emit' }>).messages;
}

/** The disposition as a retry; fails the test otherwise. */
export function retried(disposition: Disposition): Extract<Disposition, { kind: 'retry' }> {
  assert.equal(disposition.kind, 'retry', `expected a retry disposition, got ${JSON.stringify(summarize(disposition))}`);
  return disposition as Extract<Disposition, { kind: 'retry' }>;
}

/** `crawl.outcomes` matches `crawl.outcomes.3`, and `crawl.outcomes.3` only itself. */
export const onSubject = (subject: string, prefix: string) => subject === prefix || subject.startsWith(`${prefix}.`);

/** Emitted messages whose subject is under `prefix` (e.g. 'crawl.frontier'). */
export function emitsOn(disposition: Disposition, prefix: string): Emit[] {
  return emitted(disposition).filter((e) => onSubject(e.subject, prefix));
}

/** Emitted messages under `prefix`, decoded. */
export function decodedOn<T>(disposition: Disposition, prefix: string, decode: (data: Uint8Array) => T): T[] {
  return emitsOn(disposition, prefix).map((e) => decode(e.data));
}

/** The one message under `prefix`, decoded; fails unless there is exactly one. */
export function onlyOn<T>(disposition: Disposition, prefix: string, decode: (data: Uint8Array) => T): T {
  const found = decodedOn(disposition, prefix, decode);
  assert.equal(found.length, 1, `expected one message on ${prefix}, got ${found.length} (subjects: ${subjectsOf(disposition).join(', ')})`);
  return found[0]!;
}

/** The subjects of an emit disposition, in order. */
export function subjectsOf(disposition: Disposition): string[] {
  return disposition.kind === 'emit' ? disposition.messages.map((e) => e.subject) : [];
}

function summarize(disposition: Disposition) {
  return disposition.kind === 'emit' ? { kind: 'emit', subjects: subjectsOf(disposition) } : disposition;
}

/**
 * What the runner does with an `emit` disposition, against the fake context: publish its
 * messages to the memory streams, then run `beforeAck` and `afterPublish` with their acks.
 */
export async function settleLikeRunner(ctx: FakeContext, disposition: Disposition): Promise<Published[]> {
  if (disposition.kind !== 'emit') return [];
  const published = await ctx.publisher.publish(disposition.messages);
  await disposition.beforeAck?.(published);
  await disposition.afterPublish?.(published);
  return published;
}

/** The disposition of a gate intake that queued its URL: one message, on the host's queue. */
export function queuedOnly(disposition: Disposition): boolean {
  return disposition.kind === 'emit' && disposition.messages.length === 1 && disposition.messages[0]!.subject.startsWith('crawl.hostq.') && !!disposition.beforeAck;
}
