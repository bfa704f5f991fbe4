import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startMachineProbe } from '../../bench/machine-probe.js';

test("the benchmarks' machine probe gives the CPU time of its fixed work, each sample once", async () => {
  const probe = startMachineProbe(50);
  try {
    let samples: number[] = [];
    for (let i = 0; i < 100 && samples.length < 3; i++) {
      await sleep(100);
      samples = samples.concat(probe.take());
    }
    assert.ok(samples.length >= 3, `samples: ${samples.join(', ')}`);
    // 10–20 ms of a core on this machine; the bounds only say it is CPU time of real work, in ms
    for (const ms of samples) assert.ok(ms > 0.5 && ms < 2000, `a sample of ${ms} ms`);
    // taken twice with no turn of the event loop between: the second has nothing new
    probe.take();
    assert.deepEqual(probe.take(), []);
  } finally {
    probe.stop();
  }
});
