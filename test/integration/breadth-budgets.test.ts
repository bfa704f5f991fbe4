/**
 * --max-pages-per-domain and --target-unique-domains hold across processes: their counts live
 * in the `crawl-traps` and `crawl-seen` buckets of a real nats-server, read and written here
 * through separate connections, as gates, seen-filters and simhash in separate processes would.
 * Each gate serves its own hosts (its host queues in memory); the hosts bucket is shared.
 * The importance estimate too: a seen-filter's in-link counts reach a gate in another process
 * through the `crawl-importance` bucket.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { applyCrawlTopology } from '../../ops/nats/crawl-topology.js';
import { handleGateIntake } from '../../stages/politeness-gate/handle.js';
import { serveHost } from '../../stages/politeness-gate/serve-host.js';
import { releaseSlot } from '../../stages/shared/politeness/host-slot.js';
import { firstPassOn, heldByFirstPass, noteStoredDomain } from '../../stages/shared/breadth/first-pass.js';
import { startHostScheduler } from '../../stages/politeness-gate/index.js';
import { domainImportanceOf } from '../../stages/politeness-gate/domain-importance.js';
import { handleSeenFilter } from '../../stages/seen-filter/handle.js';
import { PartitionSeenSet } from '../../stages/seen-filter/partition-seen-set.js';
import { decodeGrant, decodeOutcome, type AdmittedUrl, type CandidateUrl } from '../../schemas/index.js';
import type { CrawlSettingsInput } from '../../pipeline/settings.js';
import { createFakeContext, httpResponse, settleLikeRunner, stageInput, type FakeContext } from '../support/fake-context.js';
import { startTestNats } from '../support/nats-server.js';

describe('breadth budgets over a real nats-server, shared by processes', () => {
  let server: Awaited<ReturnType<typeof startTestNats>>;
  const conns: NatsConnection[] = [];

  /** a stage context of its own process: its own connection to the shared buckets */
  async function processContext(name: string, settings: Partial<CrawlSettingsInput>): Promise<FakeContext> {
    const nc = await connectNats(server.url, name);
    conns.push(nc);
    const stores = await openKvStores(nc);
    const ctx = createFakeContext({ respond: () => httpResponse(404), settings: { crawlId: 'breadth-it', minDelayMs: 1000, adaptiveDelayFactor: 0, maxPerIp: 0, ...settings } });
    // the shared buckets real, the rest of the process in memory
    return Object.assign(ctx, { kv: { ...ctx.kv, hosts: stores.hosts, traps: stores.traps, seen: stores.seen, importance: stores.importance } }) as unknown as FakeContext;
  }

  before(async () => {
    server = await startTestNats();
    const nc = await connectNats(server.url, 'topology');
    conns.push(nc);
    await applyCrawlTopology(nc);
  });
  after(async () => {
    for (const nc of conns) await nc.close();
    await server?.cleanup();
  });

  it('--max-pages-per-domain 4: two gates serving five hosts of one domain grant it 4 requests in all; every other URL ends filtered, once', async () => {
    const gates = [await processContext('gate-1', { maxPagesPerDomain: 4 }), await processContext('gate-2', { maxPagesPerDomain: 4 })];
    const hostsOf = [['a.shared.test', 'b.shared.test', 'c.shared.test'], ['d.shared.test', 'e.shared.test']];
    let seq = 0;
    for (const [g, hosts] of hostsOf.entries()) {
      for (const host of hosts) {
        for (const path of ['/1', '/2']) {
          const m: AdmittedUrl = { v: 1, url: `https://${host}${path}`, host, domain: 'shared.test', depth: 1, source_url: null, via: 'link', fetch_id: `${host}${path}`, admitted_at: 0 };
          await settleLikeRunner(gates[g]!, await handleGateIntake(stageInput([m], { streamSeq: ++seq, subject: 'crawl.frontier.0' }), gates[g]!));
        }
      }
    }
    // the gates take turns host by host, as their timetables would, until no host has work
    for (let round = 0; round < 20; round++) {
      const kinds = await Promise.all(
        hostsOf.map(async (hosts, g) => {
          const ctx = gates[g]!;
          const out: string[] = [];
          for (const host of hosts) {
            const turn = await serveHost(ctx, host);
            out.push(turn.kind);
            if (turn.kind === 'granted') {
              const grant = decodeGrant(ctx.streams.on('crawl.ready').at(-1)!.data);
              await releaseSlot(ctx.kv.hosts, host, grant.lease_id, ctx.clock.now(), { kind: 'ok', durationMs: 5, baseDelayMs: 1000 }, { adaptiveDelayFactor: 0, backoffBaseMs: 1000, maxBackoffMs: 60_000, pauseAfterFailures: 5, pauseMs: 60_000 });
            }
          }
          return out;
        }),
      );
      if (kinds.flat().every((k) => k === 'idle')) break;
      for (const ctx of gates) ctx.clock.advance(2000);
    }
    const granted = gates.flatMap((ctx) => ctx.streams.on('crawl.ready').map((m) => decodeGrant(m.data).url));
    const refused = gates.flatMap((ctx) => ctx.streams.on('crawl.outcomes').map((m) => decodeOutcome(m.data)));
    assert.equal(granted.length, 4, `grants: ${granted.join(' ')}`);
    assert.equal(refused.length, 6);
    assert.ok(refused.every((o) => o.outcome === 'filtered' && o.reason === 'max_pages_per_domain: 4 requests to shared.test granted'));
    assert.equal(new Set([...granted, ...refused.map((o) => o.url)]).size, 10, 'every URL ended exactly once');
  });

  it('--target-unique-domains 3: seen-filters in two processes hold links to domains either admitted; the pass ends for both when simhash has stored pages of 3 domains', async () => {
    const settings = { targetUniqueDomains: 3 };
    const [seenA, seenB, simhash] = [await processContext('seen-1', settings), await processContext('seen-2', settings), await processContext('simhash', settings)];
    const link = (url: string, via: CandidateUrl['via'] = 'link'): CandidateUrl => {
      const host = new URL(url).host;
      return { v: 1, url, host, domain: host.split('.').slice(-2).join('.'), depth: 1, source_url: 'https://s.test/', via };
    };
    assert.deepEqual([...(await heldByFirstPass(seenA, [link('https://www.one.test/', 'seed'), link('https://www.two.test/')]))], []);
    // another process: one.test and two.test are reached already, three.test is new
    assert.deepEqual([...(await heldByFirstPass(seenB, [link('https://blog.one.test/a'), link('https://www.three.test/'), link('https://www.two.test/b')]))], [0, 2]);
    for (const domain of ['one.test', 'two.test']) await noteStoredDomain(simhash, { domain });
    for (const ctx of [seenA, seenB]) ctx.clock.advance(1000);
    assert.equal(await firstPassOn(seenA), true, '2 of 3 domains stored');
    await noteStoredDomain(simhash, { domain: 'three.test' });
    for (const ctx of [seenA, seenB]) ctx.clock.advance(1000);
    assert.equal(await firstPassOn(seenA), false);
    assert.equal(await firstPassOn(seenB), false);
    assert.deepEqual([...(await heldByFirstPass(seenB, [link('https://www.one.test/c')]))], [], 'after the pass, nothing is held');
  });

  it("importance: a gate in another process hears a seen-filter's in-link counts, at each power of two, through crawl-importance", async () => {
    const [seenFilter, gate] = [await processContext('seen-imp', {}), await processContext('gate-imp', {})];
    const bg = await startHostScheduler(gate, 4);
    try {
      const set = PartitionSeenSet.empty(1_000, 0);
      const board = domainImportanceOf(gate.kv.importance);
      // five pages of other domains link to pages of cited.test: counts 1 to 5, written at 1, 2 and 4
      for (let i = 1; i <= 5; i++) {
        const link: CandidateUrl = { v: 1, url: `https://www.cited.test/${i}`, host: 'www.cited.test', domain: 'cited.test', depth: 1, source_url: `https://www.s${i}.test/`, via: 'link' };
        await handleSeenFilter(stageInput([link], { streamSeq: i, subject: 'crawl.normalized.0' }), seenFilter, set);
      }
      for (let i = 0; i < 100 && board.of('www.cited.test', 'cited.test') < 4; i++) await sleep(20);
      assert.equal(board.of('www.cited.test', 'cited.test'), 4, 'the last power of two written');
      assert.equal(await seenFilter.kv.hosts.get('_imp.cited.test'), null, 'nothing written to the hosts bucket');
    } finally {
      await bg.stop();
    }
  });
});
