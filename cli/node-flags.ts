import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

/**
 * The flags the `crawl` command starts node with: the first line of cli/main.ts says them
 * again (a shebang cannot import), and a unit test checks that the two agree. Whatever starts
 * a crawl process itself (the benches) passes these, so it measures what `crawl` runs.
 *
 * --single-threaded-gc: V8 collects on the thread that allocates instead of helping itself
 * with four platform threads (parallel scavenges, concurrent marking and sweeping). On two
 * cores shared by the crawl, its extract thread and nats-server, those helpers cost more CPU
 * than the work they take over; the main thread does a little more itself
 * (docs/performance.md#the-collector-on-one-thread). Pauses are longer; nothing in a crawl
 * waits on one the way a request handler would.
 *
 * --max-semi-space-size=8: the new space of each isolate (the main thread's and each extract
 * thread's; two semi-spaces) grows to 16 MB instead of V8's 32. A crawl's young objects are
 * messages and requests in flight: with half the space V8 scavenges twice as often, each
 * scavenge cheaper, and the peak RSS is lower for about the same CPU a page; a larger space
 * raised the peak and saved no CPU (docs/performance.md#the-young-generation).
 *
 * --heap-growing-percent=70: after each full collection V8 lets the old generation grow to
 * 1.7 times what survived before the next, instead of a factor of up to 4 it picks from how
 * fast the program allocates; a crawl allocates fast, so the heap kept memory it did not need.
 * 70 is where the peak RSS falls most for the least CPU: lower costs more CPU, higher saves
 * too little memory (docs/performance.md#the-old-generation).
 */
export const CRAWL_NODE_FLAGS: readonly string[] = ['--single-threaded-gc', '--max-semi-space-size=8', '--heap-growing-percent=70'];

/**
 * The environment the `crawl` command starts node with, for what no node flag sets.
 *
 * MALLOC_ARENA_MAX=2: glibc gives each thread that allocates natively (the extract threads,
 * libuv's pool, DuckDB's and nats' buffers through node) a malloc arena of its own, up to eight
 * a core, and memory freed in one arena is not reused by another. Two arenas hold the same
 * work in less: interleaved bench:broad pairs at 4,000 domains peaked lower at the same CPU a
 * page (docs/performance.md#memory). It is read when the process starts, so it can only come
 * from whatever starts node.
 */
export const CRAWL_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

const CRAWL_SCRIPT = fileURLToPath(new URL('./main.js', import.meta.url));

/**
 * node's arguments for a crawl process started the way the `crawl` command starts itself:
 * CRAWL_NODE_FLAGS, then `nodeArgs` (which may undo them or add a profiler), the script, `args`.
 */
export const crawlProcessArgs = (args: readonly string[], nodeArgs: readonly string[] = []): string[] => [...CRAWL_NODE_FLAGS, ...nodeArgs, CRAWL_SCRIPT, ...args];

/** The first line of cli/main.ts for this environment and these flags. */
export const crawlShebang = (): string =>
  `#!/usr/bin/env -S ${Object.entries(CRAWL_ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')} node ${CRAWL_NODE_FLAGS.join(' ')}`;

/**
 * With `--stage-threads 2` the main thread no longer does all the work alone, so the collector
 * can afford to run more often: the old generation of every isolate grows to 1.4× what survived
 * instead of 1.7×. Two isolates each keeping the larger headroom took the process's peak RSS
 * past one thread's; one thread, which the collector already slows, keeps 70
 * (docs/performance.md#the-old-generation). Set at run time, before the thread starts: V8 reads
 * the flag at each full collection.
 */
export const STAGE_THREADS_HEAP_GROWING_PERCENT = 40;

export function tightenHeapForStageThreads(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${STAGE_THREADS_HEAP_GROWING_PERCENT}`);
}
