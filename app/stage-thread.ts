import { Worker } from 'node:worker_threads';
import type { NatsSecurity } from '../pipeline/adapters/nats-connection.js';
import type { ProxyCredentials } from '../pipeline/adapters/http/proxy-config.js';
import type { Logger, LogOptions } from '../pipeline/logger.js';
import type { MetricsSnapshot, StageMetrics } from '../pipeline/metrics.js';
import type { CrawlSettings } from '../pipeline/settings.js';
import type { StageName } from '../pipeline/stage.js';
import type { ExtractStageOptions } from '../stages/extract/index.js';
import type { CrawlNode } from './node.js';

/**
 * Stages of `crawl run` on a thread of their own (`--stage-threads 2`): the process's main
 * thread runs the stages up to fetch, a second thread those that handle fetched pages. Each
 * thread has its own NATS connection and event loop and runs its stages exactly as a
 * `crawl worker` process would (app/node.ts), so nothing about their guarantees changes; the
 * stages were already stateless consumers of durable streams, so splitting them is only a
 * question of where their CPU is spent: one thread's event loop was the crawl's limit while
 * the machine's other core had room.
 */
export interface StageThreadInit {
  /** the NATS server's URL (it may carry credentials: never logged) and how to authenticate */
  url: string;
  security: NatsSecurity;
  settings: CrawlSettings;
  stages: StageName[];
  outDir: string;
  log: LogOptions & { name: string };
  extract?: ExtractStageOptions;
  proxyCredentials?: ReadonlyMap<string, ProxyCredentials>;
}

/** What a stage thread tells its process. */
export type StageThreadReport =
  | { kind: 'started' }
  | { kind: 'failed'; message: string }
  | { kind: 'metrics'; snapshot: MetricsSnapshot; notReady: string | null }
  | { kind: 'stopped' };

/** What the process tells a stage thread. */
export type StageThreadCommand = { kind: 'stop' };

/** How often a stage thread sends its metrics: what `/metrics` and the progress line show of it lags this much at most. */
export const THREAD_METRICS_EVERY_MS = 1000;

/** The stages `--stage-threads 2` moves to the second thread: everything that handles a fetched page. */
export const PAGE_STAGES: readonly StageName[] = ['extract', 'simhash', 'archive', 'persist'];

export interface StageThread extends Omit<CrawlNode, 'metrics'> {
  /** rejects when the thread fails after it started (its stages no longer consume) */
  failed: Promise<never>;
}

/**
 * Starts `init.stages` on a worker thread and resolves once they consume. Their metrics are
 * absorbed into `metrics` (served and totalled with the main thread's). A failure to start
 * rejects with the thread's reason.
 */
export function startStageThread(init: StageThreadInit, metrics: StageMetrics, log: Logger): Promise<StageThread> {
  const worker = new Worker(new URL('./stage-thread-main.js', import.meta.url), { workerData: init });
  const name = `stages ${init.stages.join(', ')}`;
  let notReady: string | null = 'starting';
  let started = false;
  let stopped = false;
  // settles when the thread has stopped its stages, failed, or exited: stop() waits for no more
  let ended!: () => void;
  const over = new Promise<void>((r) => (ended = r));
  let fail: (err: Error) => void = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => (fail = reject));
  failed.catch(() => undefined); // a caller that never awaits it is told through the log
  return new Promise<StageThread>((resolve, reject) => {
    const failWith = (err: Error) => {
      if (!started) {
        void worker.terminate();
        return reject(err);
      }
      ended();
      if (stopped) return;
      log.error({ stages: init.stages, err: err.message }, 'a stage thread failed: its stages no longer consume (their messages wait in their streams)');
      notReady = `the thread of ${name} failed`;
      fail(err);
    };
    worker.on('message', (report: StageThreadReport) => {
      if (report.kind === 'metrics') {
        metrics.absorb(name, report.snapshot);
        notReady = report.notReady;
      } else if (report.kind === 'started') {
        started = true;
        resolve(thread);
      } else if (report.kind === 'failed') failWith(new Error(report.message));
      else if (report.kind === 'stopped') ended();
    });
    worker.on('error', (err) => failWith(err));
    worker.on('exit', (code) => {
      ended();
      if (!stopped) failWith(new Error(`the thread of ${name} exited (code ${code})`));
    });
    const thread: StageThread = {
      failed,
      notReady: () => notReady,
      async stop() {
        if (stopped) return;
        stopped = true;
        // a thread that failed or exited before has nothing left to stop
        worker.postMessage({ kind: 'stop' } satisfies StageThreadCommand);
        await over;
        await worker.terminate();
      },
    };
  });
}
