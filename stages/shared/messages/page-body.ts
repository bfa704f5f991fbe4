/**
 * A response body in the messages that carry it (fetched pages, exchanges, render requests):
 * inside the message while the message fits the server's max_payload, as always; a larger one
 * (a 5 MB page on a server that takes 1 MB messages) is stored beside it first, on the bodies
 * stream, and the message carries an empty body and `body_ref`. Readers take the whole body
 * with `bodyOf`, whichever way it came.
 */
import { BodyMissingError, type BodyRef } from '../../../ports/bodies.js';
import { SchemaError } from '../../../schemas/index.js';
import { subjectFor } from '../../../pipeline/partition.js';
import type { StageContext } from '../../../pipeline/stage.js';

/** Room kept in a message for everything but the body (headers, URL, fields). */
export const MESSAGE_OVERHEAD_BYTES = 256 * 1024;

const EMPTY = new Uint8Array(0);

/** The largest body that travels inside its message on a server that takes `maxPayloadBytes`. */
export const inlineBodyLimit = (maxPayloadBytes: number) => maxPayloadBytes - MESSAGE_OVERHEAD_BYTES;

/** A body as a message carries it (spread it into the message): the body itself, or an empty one and where it is stored. */
export interface PlacedBody {
  body: Uint8Array;
  body_ref?: BodyRef;
}

/**
 * Where `body` travels: in its message when it fits, else stored now (under the host's
 * partition), before the message that refers to it is published. Storing is idempotent (a
 * redelivered fetch stores the same body again as the same chunks); a process that dies
 * between storing and publishing leaves chunks nothing refers to, which the stream's
 * retention removes with the rest.
 */
export async function placeBody(ctx: StageContext, stage: string, host: string, body: Uint8Array): Promise<PlacedBody> {
  if (body.length === 0 || body.length <= inlineBodyLimit(ctx.maxPayloadBytes)) return { body };
  const ref = await ctx.bodies.put(subjectFor('bodies', host, ctx.settings.partitions), body);
  ctx.metrics.count(stage, 'bodies', 'stored_beside', 1);
  return { body: EMPTY, body_ref: ref };
}

/**
 * The whole body of a message, from the message or the bodies stream. A body that can no
 * longer be read whole (retention removed its chunks) makes the message unreadable, which is
 * a SchemaError: the runner dead-letters the message with this reason, and a replay reports it.
 */
export async function bodyOf(m: { url: string; body: Uint8Array; body_ref?: BodyRef | undefined }, ctx: StageContext): Promise<Uint8Array> {
  if (!m.body_ref) return m.body;
  try {
    return await ctx.bodies.get(m.body_ref);
  } catch (err) {
    if (err instanceof BodyMissingError) throw new SchemaError(`reading the body of ${m.url} (${m.body_ref.length} bytes, stored beside its message): ${err.message}`, { cause: err });
    throw err;
  }
}
