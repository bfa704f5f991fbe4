import { isMainThread, parentPort, type TransferListItem } from 'node:worker_threads';

/** What the pool sends a worker (pipeline/worker-pool.ts). */
export interface JobRequest {
  id: number;
  input: unknown;
}

/** What a worker answers: the output, or what the job function threw. */
export type JobReply<Out> = { id: number; ok: true; output: Out } | { id: number; ok: false; error: { message: string; stack?: string } };

/** A job's output and the buffers in it to move to the main thread instead of copying. */
export interface JobResult<Out> {
  output: Out;
  transfer?: TransferListItem[];
}

/**
 * The body of a worker script: answers every job with `run`. A thrown error is sent back
 * and rejects that job only; the worker keeps serving.
 */
export function serveJobs<In, Out>(run: (input: In) => JobResult<Out> | Promise<JobResult<Out>>): void {
  if (isMainThread || !parentPort) throw new Error('serveJobs runs in a worker thread started by a WorkerPool');
  const port = parentPort;
  port.on('message', async ({ id, input }: JobRequest) => {
    let reply: JobReply<Out>;
    let transfer: TransferListItem[] = [];
    try {
      const result = await run(input as In);
      reply = { id, ok: true, output: result.output };
      transfer = result.transfer ?? [];
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      reply = { id, ok: false, error: { message: e.message, stack: e.stack } };
    }
    try {
      port.postMessage(reply, transfer);
    } catch (err) {
      // an output that cannot be sent (not cloneable) fails its job, not the worker
      port.postMessage({ id, ok: false, error: { message: `the job's output cannot be sent: ${(err as Error).message}` } } satisfies JobReply<Out>);
    }
  });
}

/**
 * A copy of `bytes` in a buffer of its own, safe to transfer: a Uint8Array is often a view
 * into a bigger buffer (msgpackr packs many messages into one, a socket read holds several),
 * which a transfer would take away from its owner, and a plain clone would copy whole.
 */
export function ownedCopy(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes);
}
