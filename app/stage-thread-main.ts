/**
 * The entry of a stage thread (app/stage-thread.ts): connects to the crawl's NATS server,
 * runs its stages with app/node.ts, sends its metrics every THREAD_METRICS_EVERY_MS, and on
 * `stop` drains them (in-flight messages finish, outputs flush) before it says `stopped`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { createLogger } from '../pipeline/logger.js';
import { StageMetrics } from '../pipeline/metrics.js';
import { startNode, type CrawlNode } from './node.js';
import { THREAD_METRICS_EVERY_MS, type StageThreadCommand, type StageThreadInit, type StageThreadReport } from './stage-thread.js';

const init = workerData as StageThreadInit;
const port = parentPort!;
const report = (r: StageThreadReport) => port.postMessage(r);

async function main(): Promise<void> {
  const log = createLogger(init.log.name, init.log);
  const metrics = new StageMetrics();
  const nc = await connectNats(init.url, `crawl run: ${init.stages.join(', ')}`, init.security);
  let node: CrawlNode;
  try {
    node = await startNode(nc, init.settings, init.stages, {
      log,
      metrics,
      outDir: init.outDir,
      ...(init.extract ? { extract: init.extract } : {}),
      ...(init.proxyCredentials ? { proxyCredentials: init.proxyCredentials } : {}),
    });
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
  const sendMetrics = async () => report({ kind: 'metrics', snapshot: await metrics.snapshot(), notReady: node.notReady() });
  const timer = setInterval(() => void sendMetrics().catch(() => undefined), THREAD_METRICS_EVERY_MS);
  await sendMetrics();
  report({ kind: 'started' });
  port.on('message', (command: StageThreadCommand) => {
    if (command.kind !== 'stop') return;
    clearInterval(timer);
    void (async () => {
      await node.stop();
      await nc.drain().catch(() => undefined);
      // the last figures, so the process's totals count every message this thread handled
      await sendMetrics().catch(() => undefined);
      report({ kind: 'stopped' });
    })().catch((err: Error) => report({ kind: 'failed', message: `stopping: ${err.message}` }));
  });
}

main().catch((err: Error) => report({ kind: 'failed', message: err.message }));
