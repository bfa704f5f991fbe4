import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkerCrashedError, WorkerJobError, WorkerPool, WorkerPoolClosedError } from '../../pipeline/worker-pool.js';
import type { TestJob, TestReply } from '../support/pool-test-worker.js';

const SCRIPT = new URL('../support/pool-test-worker.js', import.meta.url);
const POOL_MODULE = new URL('../../pipeline/worker-pool.js', import.meta.url);

async function withPool(size: number, body: (pool: WorkerPool<TestJob, TestReply>) => Promise<void>, jobsPerWorker?: number) {
  const pool = new WorkerPool<TestJob, TestReply>(SCRIPT, { size, name: 'test', jobsPerWorker });
  try {
    await body(pool);
  } finally {
    await pool.close();
  }
}

describe('worker pool', () => {
  test('runs every job and spreads them over the workers', async () => {
    await withPool(2, async (pool) => {
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.run({ op: 'double', bytes: new Uint8Array([i, 1]) })));
      assert.deepEqual(replies.map((r) => [...r.bytes!]), Array.from({ length: 20 }, (_, i) => [2 * i, 2]));
      assert.equal(new Set(replies.map((r) => r.threadId)).size, 2, 'both workers got jobs');
    });
  });

  test('buffers in the transfer list are moved both ways, not copied', async () => {
    await withPool(1, async (pool) => {
      const big = new Uint8Array(4096).fill(3);
      const input = big.subarray(0, 16);
      const copy = new Uint8Array(input);
      const reply = await pool.run({ op: 'double', bytes: copy }, [copy.buffer]);
      assert.equal(copy.byteLength, 0, 'the transferred input is gone from this thread');
      assert.equal(reply.inputBufferBytes, 16, 'the worker got the 16 bytes, not a larger buffer');
      assert.deepEqual([...reply.bytes!], Array(16).fill(6));
      assert.equal((await pool.run({ op: 'was-last-output-moved' })).moved, true, 'the output left the worker by transfer');
    });
  });

  test('a job that throws, or whose output cannot be sent, rejects with its message; the worker keeps serving', async () => {
    await withPool(1, async (pool) => {
      const before = (await pool.run({ op: 'sleep', ms: 0 })).threadId;
      await assert.rejects(pool.run({ op: 'throw', message: 'bad input 42' }), (err: Error) => err instanceof WorkerJobError && err.message === 'bad input 42');
      await assert.rejects(pool.run({ op: 'answer-a-function' }), (err: Error) => err instanceof WorkerJobError && /output cannot be sent/.test(err.message));
      assert.equal((await pool.run({ op: 'sleep', ms: 0 })).threadId, before, 'same worker');
    });
  });

  for (const op of ['crash', 'exit'] as const) {
    test(`a worker that dies (${op}) rejects its job; a new worker takes the next ones`, async () => {
      await withPool(1, async (pool) => {
        const before = (await pool.run({ op: 'sleep', ms: 0 })).threadId;
        const dying = pool.run({ op });
        // one job per worker: this one waits in the queue while the worker dies
        const queued = pool.run({ op: 'double', bytes: new Uint8Array([5]) });
        await assert.rejects(dying, (err: Error) => err instanceof WorkerCrashedError && /died/.test(err.message));
        const after = await queued;
        assert.deepEqual([...after.bytes!], [10], 'the queued job is done');
        assert.notEqual(after.threadId, before, 'by a new worker');
      }, 1);
    });
  }

  test('close rejects queued and running jobs, and later ones', async () => {
    const pool = new WorkerPool<TestJob, TestReply>(SCRIPT, { size: 1, jobsPerWorker: 1 });
    await pool.run({ op: 'sleep', ms: 0 });
    const running = assert.rejects(pool.run({ op: 'sleep', ms: 10_000 }), WorkerPoolClosedError);
    const queued = assert.rejects(pool.run({ op: 'sleep', ms: 0 }), WorkerPoolClosedError);
    await pool.close();
    await running;
    await queued;
    await assert.rejects(pool.run({ op: 'sleep', ms: 0 }), WorkerPoolClosedError);
    await pool.close();
  });

  test('an idle pool does not keep the process alive, a pending job does', async () => {
    const script = `
      const { WorkerPool } = await import(${JSON.stringify(POOL_MODULE.href)});
      const pool = new WorkerPool(new URL(${JSON.stringify(SCRIPT.href)}), { size: 2 });
      const r = await pool.run({ op: 'sleep', ms: 300 });
      console.log('done', typeof r.threadId);
    `;
    // a file, not -e: workers inherit the process's flags, and --input-type is refused in a worker
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'pool-exit-')), 'main.mjs');
    writeFileSync(file, script);
    // a process the pool kept alive would be killed at the timeout, and execFile would reject
    const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 20_000 });
    assert.equal(stdout.trim(), 'done number', 'the job finished although nothing else kept the process alive, and the process then exited without close()');
  });
});

