import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * Waits until JetStream answers on this connection: a cluster answers only once it has a
 * meta leader, which takes a few seconds after a server is lost or the cluster starts.
 * `onWait` is called once, when the first try failed. Throws after `timeoutMs`.
 */
export async function waitForJetStream(nc: NatsConnection, timeoutMs: number, onWait?: (why: string) => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let told = false;
  for (;;) {
    try {
      await (await jetstreamManager(nc, { timeout: 2000 })).getAccountInfo();
      return;
    } catch (err) {
      const why = (err as Error).message;
      if (Date.now() > deadline) throw new Error(`JetStream did not answer within ${Math.round(timeoutMs / 1000)} s: ${why}`, { cause: err });
      if (!told) onWait?.(why);
      told = true;
      await sleep(500);
    }
  }
}
