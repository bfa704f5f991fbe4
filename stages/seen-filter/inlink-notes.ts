import type { CandidateUrl } from '../../schemas/index.js';
import type { StageContext } from '../../pipeline/stage.js';
import { jsonValue } from '../../pipeline/kv-store.js';
import { oncePerObject } from '../shared/once-per-object.js';
import { DomainInlinks, importanceKey, isImportanceStep, type ImportanceNote } from '../shared/importance/domain-inlinks.js';

/** this process's in-link counts per registrable domain (the importance estimate) */
export const domainInlinksOf = oncePerObject((_ctx: StageContext) => new DomainInlinks());

/**
 * Counts every link of a candidate message as an in-link of its target's domain, repeats
 * included (a repeat the seen set drops is a further in-link), so that the message's URLs are
 * stamped with counts that include their own page's links. A domain whose count reaches a step
 * (a power of two) gets a note the gates hear (domain-inlinks.ts). The writes are started
 * here and returned, to be awaited with the message's other writes: a failure then fails the
 * message.
 */
export function noteInlinks(ctx: StageContext, candidates: readonly CandidateUrl[]): Promise<unknown> {
  const inlinks = domainInlinksOf(ctx);
  const steps = new Map<string, number>();
  for (const c of candidates) {
    if (c.via !== 'link' || c.source_url === null) continue;
    const n = inlinks.saw(c.source_url, c.domain);
    if (isImportanceStep(n)) steps.set(c.domain, n);
  }
  const noting = Promise.all([...steps].map(([domain, n]) => ctx.kv.importance.put(importanceKey(domain), jsonValue({ domain, inlinks: n } satisfies ImportanceNote))));
  noting.catch(() => undefined); // awaited by the caller; a failure then fails the message
  return noting;
}
