import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The replicated streams (KV buckets included) that have no leader now. A cluster that lost a
 * server answers account requests as soon as it has a meta leader, but the streams the lost
 * server led elect theirs a little later, and until then every request to them times out.
 */
async function leaderlessStreams(jsm: JetStreamManager): Promise<string[]> {
  const out: string[] = [];
  for await (const si of jsm.streams.list()) {
    if (si.config.num_replicas > 1 && si.cluster && !si.cluster.leader) out.push(si.config.name);
  }
  return out;
}

/**
 * Waits until JetStream answers on this connection and every replicated stream has a leader:
 * a cluster answers only once it has a meta leader, which takes a few seconds after a server
 * is lost or the cluster starts, and its streams need a few more. `onWait` is called once,
 * when the first try failed. Throws after `timeoutMs`.
 */
export async function waitForJetStream(nc: NatsConnection, timeoutMs: number, onWait?: (why: string) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      const jsm = await jetstreamManager(nc, { timeout: 2000 });
      await jsm.getAccountInfo();
      const waiting = await leaderlessStreams(jsm);
      if (waiting.length === 0) return;
      throw new Error(`streams without a leader yet: ${waiting.slice(0, 3).join(', ')}${waiting.length > 3 ? ', …' : ''}`);
    } catch (err) {
      const why = (err as Error).message;
      if (Date.now() > deadline) throw new Error(`JetStream did not answer within ${Math.round(timeoutMs / 1000)} s: ${why}`, { cause: err });
      if (!told) onWait?.(why);
      told = true;
      await sleep(500);
    }
  }
}
