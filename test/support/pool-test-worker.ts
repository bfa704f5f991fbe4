/** A worker script for the worker-pool tests: each job names what the worker should do. */
import { threadId } from 'node:worker_threads';
import { serveJobs } from '../../pipeline/worker-jobs.js';

export type TestJob =
  | { op: 'double'; bytes: Uint8Array }
  | { op: 'was-last-output-moved' }
  | { op: 'sleep'; ms: number }
  | { op: 'throw'; message: string }
  | { op: 'answer-a-function' }
  | { op: 'crash' }
  | { op: 'exit' };

export interface TestReply {
  threadId: number;
  bytes?: Uint8Array;
  /** for 'double': the length of the input buffer as the worker got it (a transfer keeps it whole) */
  inputBufferBytes?: number;
  moved?: boolean;
}

let lastOutput: ArrayBuffer | undefined;

serveJobs<TestJob, TestReply>(async (job) => {
  switch (job.op) {
    case 'double': {
      const bytes = job.bytes.map((b) => b * 2);
      lastOutput = bytes.buffer;
      return { output: { threadId, bytes, inputBufferBytes: job.bytes.buffer.byteLength }, transfer: [bytes.buffer] };
    }
    case 'was-last-output-moved':
      // a transferred buffer is detached on the sending side
      return { output: { threadId, moved: lastOutput !== undefined && lastOutput.byteLength === 0 } };
    case 'sleep':
      await new Promise((resolve) => setTimeout(resolve, job.ms));
      return { output: { threadId } };
    case 'throw':
      throw new Error(job.message);
    case 'answer-a-function':
      // a function cannot be cloned: the answer cannot be sent
      return { output: { threadId, bytes: (() => undefined) as unknown as Uint8Array } };
    case 'crash':
      // an exception nothing catches: the worker thread dies
      setImmediate(() => {
        throw new Error('worker blew up');
      });
      return new Promise(() => undefined);
    case 'exit':
      process.exit(3);
  }
});
