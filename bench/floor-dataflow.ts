/**
 * The messaging DESIGN.md requires of every page, with no stage work around it: the floor's
 * JetStream and KV parts (`npm run bench:floor`).
 *
 * Edges: the dataflow has seven (discovered → normalize → seen-filter → gate → fetch →
 * extract → simhash → persist), each a retained stream with a durable pull consumer, and a
 * stage acks its input only after its output's publish is acknowledged. So a page costs at
 * least seven publishes (each with its ack), seven deliveries and seven acks. The message
 * sizes are those of the crawler's own streams after a bench crawl (`CRAWL_*` bytes over
 * messages): a few hundred bytes while it is a URL, the page's size once fetched. The
 * crawler has an eighth edge, its per-host queues, which is left out here.
 *
 * KV: one request in flight per host across any number of gate processes, with the host's
 * next-allowed time in KV, needs a compare-and-set to take the host's slot and one to free
 * it; a near-duplicate index shared by all simhash processes needs at least a write of the
 * page's fingerprint. Three writes a page; no reads (revisions come back from the writes).
 * The seen set is left out: the crawler's needs a KV write only every few thousand URLs.
 */
import { jetstream, jetstreamManager, AckPolicy, type JetStreamClient } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { partitionOf } from '../pipeline/partition.js';
import { eachLimited } from './stats.js';

/** Bytes per message on each edge while the page is a URL (from a 1,000-page bench crawl's streams). */
const URL_EDGE_BYTES = [550, 220, 330, 440] as const;
/** Edges that carry the page itself (fetched, extracted, results): sized as the page. */
const PAGE_EDGES = 3;
const EDGES = URL_EDGE_BYTES.length + PAGE_EDGES;
const PARTITIONS = 16;

export interface FloorPage {
  url: string;
  body: Buffer;
}

/**
 * Each page's message on each edge (0 = discovered … 6 = results), its first four bytes the
 * page's index so a stage knows what to publish next.
 */
function payloads(pages: FloorPage[]): Buffer[][] {
  return pages.map((p, i) => {
    const asPage = Buffer.concat([Buffer.alloc(4), p.body]);
    const onEdges = [...URL_EDGE_BYTES.map((bytes) => Buffer.alloc(bytes, 0x61)), ...Array<Buffer>(PAGE_EDGES).fill(asPage)];
    for (const b of onEdges) b.writeUInt32LE(i, 0);
    return onEdges;
  });
}

/**
 * One pass-through stage: each message of `edge` is republished on the next edge (its ack
 * awaited), then acked; the last edge's stage only acks. Returns once every page was handled.
 */
async function passThrough(js: JetStreamClient, stream: string, edge: number, prefix: string, inFlight: number, messagesOf: Buffer[][]): Promise<void> {
  const consumer = await js.consumers.get(stream, 'stage');
  const messages = await consumer.consume({ max_messages: inFlight });
  const next = edge + 1 < EDGES ? edge + 1 : null;
  const handled: Promise<void>[] = [];
  for await (const m of messages) {
    const page = Buffer.from(m.data.buffer, m.data.byteOffset, 4).readUInt32LE(0);
    const partition = m.subject.slice(m.subject.lastIndexOf('.') + 1);
    const published = next === null ? Promise.resolve() : js.publish(`${prefix}.${next}.${partition}`, messagesOf[page]![next]!);
    handled.push(published.then(() => m.ack()));
    if (handled.length === messagesOf.length) break;
  }
  await Promise.all(handled);
}

/** Every page through the seven edges: fed to the first, passed on by six stages (ack after publish), acked by the last. */
export async function throughEdges(natsUrl: string, pages: FloorPage[], run: number, inFlight: number): Promise<void> {
  const nc = await connectNats(natsUrl, 'floor-edges');
  const prefix = `floor${run}`;
  try {
    const jsm = await jetstreamManager(nc);
    const streams = Array.from({ length: EDGES }, (_, e) => `FLOOR_${run}_${e}`);
    for (const [e, name] of streams.entries()) {
      await jsm.streams.add({ name, subjects: [`${prefix}.${e}.*`] });
      await jsm.consumers.add(name, { durable_name: 'stage', ack_policy: AckPolicy.Explicit, max_ack_pending: inFlight * 2 });
    }
    const js = jetstream(nc);
    const messagesOf = payloads(pages);
    const stages = streams.map((name, e) => passThrough(js, name, e, prefix, inFlight, messagesOf));
    await eachLimited(pages.map((_, i) => i), inFlight, async (i) => {
      const part = partitionOf(new URL(pages[i]!.url).hostname, PARTITIONS);
      await js.publish(`${prefix}.0.${part}`, messagesOf[i]![0]!);
    });
    await Promise.all(stages);
    for (const name of streams) await jsm.streams.delete(name);
  } finally {
    await nc.drain();
  }
}

/** Three KV writes per page: the gate takes the host's slot and frees it, simhash stores the fingerprint. */
export async function kvWrites(natsUrl: string, pages: FloorPage[], run: number, inFlight: number): Promise<void> {
  const nc: NatsConnection = await connectNats(natsUrl, 'floor-kv');
  try {
    const kv = await new Kvm(nc).create(`floor-${run}`, { history: 1 });
    const slot = new TextEncoder().encode(JSON.stringify({ inFlight: true, nextAllowedAt: Date.now(), lease: 'gate-0' }));
    const fingerprint = new Uint8Array(24);
    // Key per page, not per host: pages of one host run at once here, so a per-host key would
    // fail its compare-and-set and retry, which the real gate avoids by holding the slot.
    await eachLimited(pages.map((_, i) => i), inFlight, async (i) => {
      const revision = await kv.create(`slot.${i}`, slot);
      await kv.update(`slot.${i}`, slot, revision);
      await kv.put(`fp.${i}`, fingerprint);
    });
    await kv.destroy();
  } finally {
    await nc.drain();
  }
}
