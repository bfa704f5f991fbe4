import { after, before } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../../pipeline/adapters/nats-kv.js';
import { backlogTotalOrNull } from '../../app/backlog.js';
import { streamAdmin } from '../../pipeline/adapters/stream-admin.js';
import type { TestWeb } from '../../testweb/index.js';
import type { StageInputSpec } from '../../topology/index.js';
import { startCli, type CliRun } from './crawl-cli.js';
import { startTestNats } from './nats-server.js';

type TestNats = Awaited<ReturnType<typeof startTestNats>>;

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
export async function waitUntilIdle(natsUrl: string, opts: { timeoutMs: number; started?: () => boolean; extraInputs?: readonly StageInputSpec[] }): Promise<boolean> {
  const nc = await connectNats(natsUrl, 'test-observer');
  try {
    const admin = streamAdmin(nc);
    const { hosts } = await openKvStores(nc);
    const deadline = Date.now() + opts.timeoutMs;
    let quiet = 0;
    while (quiet < 3 && Date.now() < deadline) {
      await sleep(400);
      const idle = (await backlogTotalOrNull(admin, hosts, undefined, opts.extraInputs)) === 0 && (opts.started?.() ?? true);
      quiet = idle ? quiet + 1 : 0;
    }
    return quiet >= 3;
  } finally {
    await nc.close();
  }
}

/** What a workers-against-one-server e2e test needs: the test web, an output dir, a server, its workers. */
export interface WorkerCrawl {
  web: TestWeb;
  out: string;
  nats: TestNats;
  env: NodeJS.ProcessEnv;
  workers: CliRun[];
}

/**
 * Registers the before/after hooks of such a test in the current describe: the test web
 * (from `startWeb`), a temp output dir, a real nats-server; after, every worker still
 * running is killed and everything removed. The returned object is filled in by `before`.
 */
export function useWorkerCrawl(startWeb: () => Promise<TestWeb>, dirPrefix: string): WorkerCrawl {
  const c = { workers: [] as CliRun[] } as WorkerCrawl;
  before(async () => {
    c.web = await startWeb();
    c.out = mkdtempSync(path.join(os.tmpdir(), dirPrefix));
    c.nats = await startTestNats();
    c.env = { NATS_URL: c.nats.url };
  });
  after(async () => {
    for (const w of c.workers) w.child.kill('SIGKILL');
    await c.web?.close();
    await c.nats?.cleanup();
    if (c.out) rmSync(c.out, { recursive: true, force: true });
  });
  return c;
}
