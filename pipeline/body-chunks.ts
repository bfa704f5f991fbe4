/**
 * The body store as chunks on a stream: a body is cut into pieces that each fit the server's
 * max_payload, published with a message id made of the body's digest and the piece's place,
 * and read back by stream sequence (a direct get each, in parallel), checked against its
 * length and SHA-256. Written over a two-call stream (publish, get by sequence) so the same
 * code runs on JetStream (adapters/body-stream.ts) and in memory in unit tests.
 *
 * Why not JetStream's object store (nats.js's @nats-io/obj): its client hashes in JavaScript
 * and publishes 128 KB chunks one ack at a time, many times the CPU of this per large body
 * (docs/architecture.md has the measurement), and reading an object creates a consumer on its
 * stream, which every reader's least-privilege role would have to be allowed. A direct get by
 * sequence needs neither.
 */
import { createHash } from 'node:crypto';
import { BodyMissingError, type BodyRef, type BodyStore } from '../ports/bodies.js';

/** The two operations the chunks need of a stream. */
export interface ChunkStream {
  /** the stream's name, for messages */
  readonly name: string;
  /** publishes and waits for the ack; a repeated msgId is answered with the first copy's sequence */
  publish(subject: string, data: Uint8Array, msgId: string): Promise<{ seq: number; duplicate: boolean }>;
  /** the message at `seq`, or null when the stream no longer has it */
  get(seq: number): Promise<{ subject: string; data: Uint8Array } | null>;
}

/** Room in a chunk's message for what is not the chunk: its Nats-Msg-Id header and the protocol's framing. */
export const CHUNK_HEADROOM_BYTES = 4096;

const sha256Of = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

export function chunkedBodyStore(stream: ChunkStream, maxPayloadBytes: number): BodyStore {
  const chunkBytes = Math.max(1024, maxPayloadBytes - CHUNK_HEADROOM_BYTES);
  return {
    async put(subject: string, body: Uint8Array): Promise<BodyRef> {
      if (body.length === 0) throw new Error('an empty body travels in its message: nothing to store');
      const sha256 = sha256Of(body);
      const pieces: Uint8Array[] = [];
      for (let at = 0; at < body.length; at += chunkBytes) pieces.push(body.subarray(at, at + chunkBytes));
      // the id names the content, not the fetch: the same body stored again within the stream's
      // duplicate window (a redelivered fetch, the same page at two URLs) is not stored twice, and a
      // different body (a page that changed before a fetch was repeated) never takes another's chunks
      const acks = await Promise.all(pieces.map((piece, i) => stream.publish(subject, piece, `body:${sha256}:${chunkBytes}:${i}`)));
      // a duplicate of a copy not yet stored (another process storing the same body this moment,
      // on a cluster) has no sequence to give: the caller tries again
      if (acks.some((a) => !(a.seq > 0))) throw new Error(`storing a body of ${body.length} bytes in ${stream.name}: a copy is being stored by another process; try again`);
      return { seqs: acks.map((a) => a.seq), length: body.length, sha256 };
    },

    async get(ref: BodyRef): Promise<Uint8Array> {
      const found = await Promise.all(ref.seqs.map((seq) => stream.get(seq)));
      const gone = ref.seqs.filter((_, i) => found[i] === null);
      if (gone.length > 0) {
        throw new BodyMissingError(
          `${gone.length} of its ${ref.seqs.length} chunks (seq ${gone.slice(0, 5).join(', ')}${gone.length > 5 ? ', …' : ''}) are no longer in ${stream.name}: removed by the stream's retention`,
        );
      }
      const body = Buffer.concat(found.map((m) => m!.data));
      if (body.length !== ref.length || sha256Of(body) !== ref.sha256) {
        throw new BodyMissingError(`its chunks in ${stream.name} (seq ${ref.seqs.join(', ')}) make ${body.length} bytes that are not the body stored (${ref.length} bytes, SHA-256 ${ref.sha256})`);
      }
      return body;
    },
  };
}
