/**
 * Cost of ranking due hosts in the gate's timetable (stages/politeness-gate/ready-hosts.ts):
 * 20,000 hosts of 20,000 registrable domains come due at once, five times over, and are taken
 * best first, each take counted as a grant to its domain: CPU per turn, and the heap used.
 * Only the ranking: no KV, no streams (a real turn costs a few KV reads besides).
 * Standalone: `node dist/bench/gate-ranking.js [hosts] [rounds]`.
 */
import { ReadyHosts } from '../stages/politeness-gate/ready-hosts.js';
import { DomainTally } from '../stages/politeness-gate/domain-tally.js';

const hosts = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 5);
const domainOf = (host: string) => host.slice(host.indexOf('.') + 1);
const due = new Map<string, number>();
const tally = new DomainTally();
const ready = new ReadyHosts((host, at) => ({ rank: 1, domainGrants: tally.count(domainOf(host)), weight: 1, depth: 1, at }), (host, at) => due.get(host) === at, 30_000);
const names = Array.from({ length: hosts }, (_, i) => `www.d${i}.test`);
const cpu0 = process.cpuUsage();
let taken = 0;
for (let round = 0; round < rounds; round++) {
  for (const host of names) {
    due.set(host, round);
    ready.add(host, round, round * 1000);
  }
  for (let next = ready.take(round * 1000); next; next = ready.take(round * 1000)) {
    due.delete(next.host);
    tally.granted(domainOf(next.host));
    taken++;
  }
}
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
console.log(JSON.stringify({ hosts, rounds, turns: taken, cpu_us_per_turn: +((cpuMs * 1000) / taken).toFixed(2), heap_mb: Math.round(process.memoryUsage().heapUsed / 1e6) }));
