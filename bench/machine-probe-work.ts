/**
 * The probe's process (machine-probe.ts): the same piece of CPU work every `argv[2]` ms, its
 * CPU time printed in ms, one line each, until its stdin closes. The work is JavaScript of the
 * kind a crawl runs most, string scanning and short-lived small objects, 10–20 ms of a core;
 * nothing that lives long enough for a major collection to land in one sample and not another
 * (a JSON round trip of 20,000 rows varied 2× between samples on an idle machine).
 */
const URLS = Array.from({ length: 20_000 }, (_, i) => `http://h${i % 200}.bench.test/p/${(i * 7919) % 100_000}`);

let sink = 0;

function work(): void {
  let h = 0;
  for (let round = 0; round < 6; round++) {
    for (const url of URLS) for (let j = 0; j < url.length; j++) h = (h * 31 + url.charCodeAt(j)) | 0;
  }
  const byUrl = new Map<string, { i: number; path: string }>();
  for (let i = 0; i < URLS.length; i++) byUrl.set(URLS[i]!, { i, path: URLS[i]!.slice(URLS[i]!.indexOf('/', 8)) });
  sink ^= h + byUrl.size;
}

function sample(): void {
  const before = process.cpuUsage();
  work();
  const spent = process.cpuUsage(before);
  process.stdout.write(`${((spent.user + spent.system) / 1000).toFixed(2)}\n`);
}

const intervalMs = Number(process.argv[2] ?? 2000);
// a first run, not timed, warms the JIT up
work();
sample();
const timer = setInterval(sample, intervalMs);
process.stdin.on('close', () => clearInterval(timer)).resume();
// the result is read, so the work cannot be optimised away
process.on('exit', () => sink);
