/**
 * The cluster as an operator sets it up: `crawl cluster start` brings up three servers and
 * prints NATS_URL, `crawl topology apply --replicas 3` puts every stream, consumer and
 * bucket on all three, a count the servers cannot keep is refused with a sentence before
 * anything changes, and `crawl cluster stop` ends the servers. A standalone server refuses
 * more than one copy the same way.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { runCli } from '../support/crawl-cli.js';
import { startTestNats } from '../support/nats-server.js';

/** Every stream with its copies, and each of its consumers with theirs (leader + followers). */
async function copies(jsm: JetStreamManager): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const s of jsm.streams.list()) {
    out.set(s.config.name, 1 + (s.cluster?.replicas?.length ?? 0));
    for await (const c of jsm.consumers.list(s.config.name)) out.set(`${s.config.name}/${c.name}`, 1 + (c.cluster?.replicas?.length ?? 0));
  }
  return out;
}

/** A running process (a zombie, exited but not yet reaped by its new parent, has no command line). */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/cmdline`).length > 0;
  } catch {
    return false;
  }
};

describe('cluster: start, replicas, refusal, stop', () => {
  it('keeps three copies of everything on a 3-node cluster and refuses five', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-cluster-cli-'));
    let pids: number[] = [];
    try {
      const started = await runCli(['cluster', 'start', '--dir', dir]);
      assert.equal(started.code, 0, started.stderr);
      const url = /^NATS_URL=(\S+)$/m.exec(started.stdout)?.[1];
      assert.ok(url && url.split(',').length === 3, `three servers in NATS_URL: ${started.stdout}`);
      pids = (JSON.parse(readFileSync(path.join(dir, 'cluster.json'), 'utf8')) as { nodes: Array<{ pid: number }> }).nodes.map((n) => n.pid);
      assert.ok(pids.every(alive), 'the servers run after the command returned');

      const again = await runCli(['cluster', 'start', '--dir', dir]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /a cluster already runs from/);

      // a crawl's topology: partitions too (the seen-filter's consumers)
      const applied = await runCli(['topology', 'apply', '--replicas', '3', '--partitions', '4'], { NATS_URL: url });
      assert.equal(applied.code, 0, applied.stderr);
      const nc = await connectNats(url, 'test');
      try {
        const jsm = await jetstreamManager(nc);
        const all = await copies(jsm);
        assert.ok([...all.keys()].some((k) => k === 'KV_crawl-hosts'), 'the buckets are there');
        assert.ok([...all.keys()].some((k) => k === 'CRAWL_NORMALIZED/seen-filter-p3'), 'the partition consumers are there');
        assert.ok([...all.keys()].some((k) => k === 'CRAWL_READY/fetch'));
        assert.deepEqual([...all].filter(([, n]) => n !== 3), [], 'every stream, bucket and consumer has three copies');

        const refused = await runCli(['topology', 'apply', '--replicas', '5'], { NATS_URL: url });
        assert.equal(refused.code, 2);
        assert.match(refused.stderr, /^crawl: --replicas 5: 5 replicas need 5 JetStream servers up in the cluster/m);
        assert.equal(refused.stderr.trim().split('\n').length, 1, 'one line');
        assert.deepEqual([...(await copies(jsm))].filter(([, n]) => n !== 3), [], 'nothing changed');
      } finally {
        await nc.close();
      }

      const stopped = await runCli(['cluster', 'stop', '--dir', dir]);
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.ok(!pids.some(alive), 'every server stopped');
      assert.ok(!existsSync(path.join(dir, 'cluster.json')));
    } finally {
      for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses more than one copy on a standalone server, and scales nothing', async () => {
    const nats = await startTestNats();
    try {
      const refused = await runCli(['topology', 'apply', '--replicas', '3'], { NATS_URL: nats.url });
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /3 replicas need a JetStream cluster of at least 3 servers; this server runs alone/);
      const nc = await connectNats(nats.url, 'test');
      try {
        const streams: string[] = [];
        for await (const s of (await jetstreamManager(nc)).streams.list()) streams.push(s.config.name);
        assert.deepEqual(streams, [], 'nothing was created');
      } finally {
        await nc.close();
      }
    } finally {
      await nats.cleanup();
    }
  });
});
