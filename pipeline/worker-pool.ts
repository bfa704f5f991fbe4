import { Worker, type TransferListItem } from 'node:worker_threads';
import type { JobReply, JobRequest } from './worker-jobs.js';

export class WorkerPoolClosedError extends Error {
  override name = 'WorkerPoolClosedError';
}

/** A job's worker died (uncaught exception, out of memory, exit) before it answered. */
export class WorkerCrashedError extends Error {
  override name = 'WorkerCrashedError';
}

/** The job function threw in the worker: its message and stack, re-thrown here. */
export class WorkerJobError extends Error {
  override name = 'WorkerJobError';
}

export interface WorkerPoolOptions {
  /** worker threads (at least 1) */
  size: number;
  /**
   * jobs sent to one worker before it answered: 2 keeps a worker busy while its last answer
   * waits for a busy main thread to take it and send the next job
   */
  jobsPerWorker?: number;
  /** for thread names in profiles and error messages */
  name?: string;
}

interface Job<Out> {
  id: number;
  input: unknown;
  transfer: readonly TransferListItem[];
  resolve(out: Out): void;
  reject(err: Error): void;
}

interface PoolWorker<Out> {
  thread: Worker;
  running: Map<number, Job<Out>>;
}

/**
 * Runs jobs on a few worker threads that each load `script` (which calls `serveJobs`).
 * A job goes to the least busy worker, else waits in a queue. A worker that dies rejects
 * the jobs it held and is replaced when there is work for it (not at once: a script that
 * cannot load would otherwise respawn forever). Idle workers are unref'd: the pool never
 * keeps a process alive, but a pending job does, so its promise always settles.
 */
export class WorkerPool<In, Out> {
  private readonly workers: Array<PoolWorker<Out>> = [];
  private readonly queue: Array<Job<Out>> = [];
  private readonly jobsPerWorker: number;
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly script: URL,
    private readonly opts: WorkerPoolOptions,
  ) {
    if (!Number.isInteger(opts.size) || opts.size < 1) throw new RangeError(`a worker pool needs at least 1 thread, got ${opts.size}`);
    this.jobsPerWorker = opts.jobsPerWorker ?? 2;
    // started at once, so the first jobs do not wait for the script to load
    for (let i = 0; i < opts.size; i++) this.spawn();
  }

  /** Runs one job. `transfer` lists buffers of `input` to move to the worker instead of copying (they become unusable here). */
  run(input: In, transfer: readonly TransferListItem[] = []): Promise<Out> {
    if (this.closed) return Promise.reject(new WorkerPoolClosedError(`${this.label()} is closed`));
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, input, transfer, resolve, reject });
      this.dispatch();
    });
  }

  /** Terminates the workers; jobs still queued or running reject with a WorkerPoolClosedError. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const err = new WorkerPoolClosedError(`${this.label()} closed before the job finished`);
    for (const job of this.queue.splice(0)) job.reject(err);
    const workers = this.workers.splice(0);
    for (const w of workers) for (const job of w.running.values()) job.reject(err);
    await Promise.all(workers.map((w) => w.thread.terminate()));
  }

  private label(): string {
    return `worker pool ${this.opts.name ?? this.script.pathname}`;
  }

  private spawn(): PoolWorker<Out> {
    const thread = new Worker(this.script, { name: this.opts.name });
    const w: PoolWorker<Out> = { thread, running: new Map() };
    thread.on('message', (reply: JobReply<Out>) => this.settle(w, reply));
    let crash: Error | undefined;
    thread.on('error', (err) => (crash = err));
    thread.on('exit', (code) => this.retire(w, crash ? `${crash.name}: ${crash.message}` : `exit code ${code}`));
    // after the listeners: adding a 'message' listener refs the worker again
    thread.unref();
    this.workers.push(w);
    return w;
  }

  private settle(w: PoolWorker<Out>, reply: JobReply<Out>): void {
    const job = w.running.get(reply.id);
    if (!job) return;
    w.running.delete(reply.id);
    if (w.running.size === 0) w.thread.unref();
    if (reply.ok) job.resolve(reply.output);
    else {
      const err = new WorkerJobError(reply.error.message);
      if (reply.error.stack) err.stack = reply.error.stack;
      job.reject(err);
    }
    this.dispatch();
  }

  private retire(w: PoolWorker<Out>, why: string): void {
    const i = this.workers.indexOf(w);
    if (i < 0) return; // closed: its jobs are already rejected
    this.workers.splice(i, 1);
    for (const job of w.running.values()) job.reject(new WorkerCrashedError(`${this.label()}: a worker died while running this job (${why})`));
    w.running.clear();
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      const w = this.leastBusy();
      if (!w) return;
      const job = this.queue.shift()!;
      if (w.running.size === 0) w.thread.ref();
      w.running.set(job.id, job);
      const request: JobRequest = { id: job.id, input: job.input };
      try {
        w.thread.postMessage(request, job.transfer);
      } catch (err) {
        // the input cannot be cloned: the caller's mistake, not the worker's
        w.running.delete(job.id);
        if (w.running.size === 0) w.thread.unref();
        job.reject(err as Error);
      }
    }
  }

  /** the worker with the fewest jobs below the per-worker limit; a new one if the pool is short of workers */
  private leastBusy(): PoolWorker<Out> | undefined {
    if (this.workers.length < this.opts.size) return this.spawn();
    let best: PoolWorker<Out> | undefined;
    for (const w of this.workers) if (w.running.size < this.jobsPerWorker && (!best || w.running.size < best.running.size)) best = w;
    return best;
  }
}
