/**
 * Process figures the benchmarks report, read from /proc (Linux): peak resident memory and
 * CPU time. Polled while the process runs, since neither can be read after it has exited.
 */
import { readFileSync } from 'node:fs';

/** A memory figure of /proc/<pid>/status in MB, or 0 if the process is gone. */
function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Peak resident set size (VmHWM) in MB, or 0 if the process is gone. */
export const peakRssMb = (pid: number): number => statusMb(pid, 'VmHWM');

/** Resident set size now (VmRSS) in MB, or 0 if the process is gone. */
export const rssMb = (pid: number): number => statusMb(pid, 'VmRSS');

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on

/** User + system CPU seconds the process has used so far, or null if it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name, which is in parentheses and may contain spaces
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime, stime
  } catch {
    return null;
  }
}

/** Direct children of a process (e.g. the nats-server `crawl run` starts). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Tracks a process and its children while it runs: peak RSS of the process, last CPU reading of each. */
export class ProcessWatch {
  private rssMb = 0;
  private readonly cpu = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number, intervalMs = 200) {
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    this.rssMb = Math.max(this.rssMb, peakRssMb(this.pid));
    for (const p of [this.pid, ...childPids(this.pid)]) {
      const s = cpuSeconds(p);
      if (s !== null) this.cpu.set(p, s);
    }
  }

  /** Stops polling; CPU seconds are as of the last sample (at most one interval early). */
  stop(): { peakRssMb: number; cpuSeconds: number; childCpuSeconds: number } {
    clearInterval(this.timer);
    let own = 0;
    let children = 0;
    for (const [p, s] of this.cpu) if (p === this.pid) own = s;
    else children += s;
    return { peakRssMb: this.rssMb, cpuSeconds: own, childCpuSeconds: children };
  }
}
