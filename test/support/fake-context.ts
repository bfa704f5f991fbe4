/**
 * The in-memory stage context (bench/support/memory-context.ts, shared with the benches) and
 * what unit tests check of a stage's outcome with it.
 */
import assert from 'node:assert/strict';
import type { Emit, Outcome } from '../../pipeline/stage.js';
import type { Published } from '../../ports/streams.js';
import type { FakeContext } from '../../bench/support/memory-context.js';

export * from '../../bench/support/memory-context.js';

// ---------------------------------------------------------------------------------------------
// Looking at outcomes.

/** The messages of an `emit` outcome; fails the test on retry/fail. */
export function emitted(outcome: Outcome): Emit[] {
  assert.equal(outcome.kind, 'emit', `expected an emit outcome, got ${JSON.stringify(outcome)}`);
  return (outcome as Extract<Outcome, { kind: 'emit' }>).messages;
}

/** The outcome as a retry; fails the test otherwise. */
export function retried(outcome: Outcome): Extract<Outcome, { kind: 'retry' }> {
  assert.equal(outcome.kind, 'retry', `expected a retry outcome, got ${JSON.stringify(summarize(outcome))}`);
  return outcome as Extract<Outcome, { kind: 'retry' }>;
}

/** `crawl.outcomes` matches `crawl.outcomes.3`, and `crawl.outcomes.3` only itself. */
export const onSubject = (subject: string, prefix: string) => subject === prefix || subject.startsWith(`${prefix}.`);

/** Emitted messages whose subject is under `prefix` (e.g. 'crawl.frontier'). */
export function emitsOn(outcome: Outcome, prefix: string): Emit[] {
  return emitted(outcome).filter((e) => onSubject(e.subject, prefix));
}

/** Emitted messages under `prefix`, decoded. */
export function decodedOn<T>(outcome: Outcome, prefix: string, decode: (data: Uint8Array) => T): T[] {
  return emitsOn(outcome, prefix).map((e) => decode(e.data));
}

/** The one message under `prefix`, decoded; fails unless there is exactly one. */
export function onlyOn<T>(outcome: Outcome, prefix: string, decode: (data: Uint8Array) => T): T {
  const found = decodedOn(outcome, prefix, decode);
  assert.equal(found.length, 1, `expected one message on ${prefix}, got ${found.length} (subjects: ${subjectsOf(outcome).join(', ')})`);
  return found[0]!;
}

/** The subjects of an emit outcome, in order. */
export function subjectsOf(outcome: Outcome): string[] {
  return outcome.kind === 'emit' ? outcome.messages.map((e) => e.subject) : [];
}

function summarize(outcome: Outcome) {
  return outcome.kind === 'emit' ? { kind: 'emit', subjects: subjectsOf(outcome) } : outcome;
}

/**
 * What the runner does with an `emit` outcome, against the fake context: publish its
 * messages to the memory streams, then run `beforeAck` and `afterPublish` with their acks.
 */
export async function settleLikeRunner(ctx: FakeContext, outcome: Outcome): Promise<Published[]> {
  if (outcome.kind !== 'emit') return [];
  const published = await ctx.publisher.publish(outcome.messages);
  await outcome.beforeAck?.(published);
  await outcome.afterPublish?.(published);
  return published;
}

/** The outcome of a gate intake that queued its URL: one message, on the host's queue. */
export function queuedOnly(outcome: Outcome): boolean {
  return outcome.kind === 'emit' && outcome.messages.length === 1 && outcome.messages[0]!.subject.startsWith('crawl.hostq.') && !!outcome.beforeAck;
}
