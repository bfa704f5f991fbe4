/**
 * A crawl's seeds and the links found from them reach normalize in any order: with many seeds,
 * a page of the first may link to a later seed's domain before that seed's message is handled.
 * On a real nats-server, with normalize and the seen filter running: the seeding path of
 * `crawl run`, `crawl seed` (app/seeding.ts) puts every seed's scope in first, so such a link is
 * in scope and each URL gets one outcome. A raw client that sends seeds one by one without it
 * gets the race (the second case), as docs/cli.md says.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import type { Publisher } from '../../ports/streams.js';
import { connectionPublisher } from '../../pipeline/adapters/stream-access.js';
import { startNode } from '../../app/node.js';
import { pipelineBacklog } from '../../app/backlog.js';
import { streamAdmin } from '../../pipeline/adapters/stream-admin.js';
import { publishSeeds } from '../../app/seeding.js';
import { silentLogger } from '../../pipeline/logger.js';
import { parseSettings } from '../../pipeline/settings.js';
import { partitionOf } from '../../pipeline/partition.js';
import { EDGES, SUBJECTS } from '../../topology/index.js';
import { decodeAdmitted, decodeOutcome, encodeDiscoveredLinks, encodeSeed } from '../../schemas/index.js';
import { useTestNats } from '../support/nats-server.js';

const PARTITIONS = 2;

describe('seeds and their links in any order, on a real nats-server', () => {
  const nats = useTestNats({ partitions: PARTITIONS });
  let node: Awaited<ReturnType<typeof startNode>> | undefined;
  after(async () => node?.stop());

  const drained = async () => {
    for (let i = 0; i < 200; i++) {
      const b = await pipelineBacklog(streamAdmin(nats.nc));
      if (b.perStage['normalize'] === 0 && b.perStage['seen-filter'] === 0) return;
      await sleep(50);
    }
    assert.fail('normalize and the seen filter did not drain');
  };
  /** every message of a stream, decoded */
  const all = async <T>(stream: string, decode: (b: Uint8Array) => T): Promise<T[]> => {
    const out: T[] = [];
    const last = (await nats.jsm.streams.info(stream)).state.last_seq;
    for (let seq = 1; seq <= last; seq++) {
      const m = await nats.jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (m) out.push(decode(m.data));
    }
    return out;
  };
  /** each URL's outcomes so far: admitted to the frontier, or filtered with its reason */
  const outcomes = async (crawlOf: (url: string) => boolean): Promise<Map<string, string[]>> => {
    const by = new Map<string, string[]>();
    const note = (url: string, what: string) => crawlOf(url) && by.set(url, [...(by.get(url) ?? []), what]);
    for (const a of await all(EDGES.frontier.stream, decodeAdmitted)) note(a.url, 'admitted');
    for (const o of (await all(EDGES.results.stream, (b) => b)).flatMap((b) => {
      try {
        return [decodeOutcome(b)];
      } catch {
        return [];
      }
    })) note(o.url, `${o.outcome} ${o.reason.split(':')[0]}`);
    return by;
  };
  /** the links the first seed's page holds: to the second seed, and to another page of its domain */
  const linksFrom = (from: string, to: string) =>
    encodeDiscoveredLinks({ v: 1, source_url: `http://${from}/`, depth: 1, via: 'link', links: [{ url: `http://${to}/` }, { url: `http://www.${to}/about.html` }] });
  const linksSubject = (host: string) => `${SUBJECTS.links}.${partitionOf(host, PARTITIONS)}`;

  it("links to a seed's domain that arrive before the seed: each URL has one outcome", async () => {
    node = await startNode(nats.nc, parseSettings({ crawlId: 'race', partitions: PARTITIONS }), ['normalize', 'seen-filter'], { log: silentLogger() });
    const js = jetstream(nats.nc);
    // the seeding path, with its seeds message held back until the links are in
    const held: Uint8Array[] = [];
    const publisher = connectionPublisher(nats.nc);
    const holding: Publisher = {
      publish: async (messages) => {
        const seeds = messages.filter((m) => m.subject === SUBJECTS.seeds);
        held.push(...seeds.map((m) => m.data));
        return publisher.publish(messages.filter((m) => m.subject !== SUBJECTS.seeds));
      },
    };
    const seeded = await publishSeeds(holding, ['http://race-one.test/', 'http://race-two.test/']);
    assert.equal(seeded.scopeNotPut, undefined);
    await js.publish(linksSubject('race-one.test'), linksFrom('race-one.test', 'race-two.test'));
    await drained();
    for (const m of held) await js.publish(SUBJECTS.seeds, m);
    await drained();
    const got = await outcomes((u) => u.includes('race-'));
    assert.deepEqual(Object.fromEntries([...got].sort()), {
      'http://race-one.test/': ['admitted'],
      'http://race-two.test/': ['admitted'],
      'http://www.race-two.test/about.html': ['admitted'],
    });
  });

  it('a raw client that sends seeds one by one, without their scope first, races: the link is filtered, then the seed admitted', async () => {
    const js = jetstream(nats.nc);
    await js.publish(SUBJECTS.seeds, encodeSeed({ url: 'http://raw-one.test/' }));
    await js.publish(linksSubject('raw-one.test'), linksFrom('raw-one.test', 'raw-two.test'));
    await drained();
    await js.publish(SUBJECTS.seeds, encodeSeed({ url: 'http://raw-two.test/' }));
    await drained();
    const got = await outcomes((u) => u.includes('raw-'));
    assert.deepEqual(got.get('http://raw-two.test/'), ['admitted', 'filtered out_of_scope']);
  });
});
