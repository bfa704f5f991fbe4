import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager } from '@nats-io/jetstream';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { pipelineBacklog } from '../../pipeline/crawl-node.js';
import { startCli, type CliRun } from './crawl-cli.js';

/** One `crawl worker --stage S --out DIR` process per entry of `stages` (repeat a stage to run several). */
export function startWorkers(stages: readonly string[], out: string, env: NodeJS.ProcessEnv): CliRun[] {
  return stages.map((stage) => startCli(['worker', '--stage', stage, '--out', out], env));
}

/**
 * Waits until a crawl run by workers is idle, as `crawl run --until-idle` decides it: no
 * consumer has anything pending, no host has queued URLs or a request in flight, three
 * checks in a row (and `started()` true, e.g. the test web has seen a request). False when
 * `timeoutMs` passes first.
 */
export async function waitUntilIdle(natsUrl: string, opts: { timeoutMs: number; started?: () => boolean }): Promise<boolean> {
  const nc = await connectNats(natsUrl, 'test-observer');
  try {
    const jsm = await jetstreamManager(nc);
    const { hosts } = await openKvStores(nc);
    const deadline = Date.now() + opts.timeoutMs;
    let quiet = 0;
    while (quiet < 3 && Date.now() < deadline) {
      await sleep(400);
      const idle = (await pipelineBacklog(jsm, hosts)).total === 0 && (opts.started?.() ?? true);
      quiet = idle ? quiet + 1 : 0;
    }
    return quiet >= 3;
  } finally {
    await nc.close();
  }
}
