import { z } from 'zod';
import { decodeInternal, encodeMessage } from './codec.js';
import { RevisitState } from './url-messages.js';

/**
 * crawl.revisit.<slot>.<job>: a URL of a crawl job, due for a revisit at `state.due_at`.
 * The whole schedule is these messages (no per-URL state elsewhere).
 */
export const RevisitRecord = z.object({
  v: z.literal(1),
  job: z.string(),
  url: z.string(),
  host: z.string(),
  depth: z.number().int().nonnegative(),
  state: RevisitState,
});
export type RevisitRecord = z.infer<typeof RevisitRecord>;

export const encodeRevisit = (m: RevisitRecord) => encodeMessage(m);
export const decodeRevisit = (b: Uint8Array) => decodeInternal(RevisitRecord, b, 'revisit record');
