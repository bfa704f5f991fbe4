/**
 * How fast the machine is, sampled while a benchmark runs: the CPU time one fixed piece of
 * work takes, in a process of its own (machine-probe-work.ts), every 2 s, at ~1 % of a core.
 *
 * Why: this machine's speed moves by ±15 % within an hour and CPU time moves with it, not only
 * wall time: windows of one `bench:long` run doing the same work took 6.0 and 8.1 ms of crawl
 * CPU a page. A window's pages/s is only comparable with another's next to the probe's figure
 * for each (docs/performance.md).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export interface MachineProbe {
  /** the probe's samples (ms of CPU for the fixed work) since the last call */
  take(): number[];
  stop(): void;
}

export function startMachineProbe(intervalMs = 2000): MachineProbe {
  const script = fileURLToPath(new URL('./machine-probe-work.js', import.meta.url));
  const child = spawn(process.execPath, [script, String(intervalMs)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let samples: number[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const ms = Number(line);
    if (Number.isFinite(ms)) samples.push(ms);
  });
  return {
    take() {
      const taken = samples;
      samples = [];
      return taken;
    },
    stop() {
      child.stdin.end();
      child.kill();
    },
  };
}
