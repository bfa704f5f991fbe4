import { fileURLToPath } from 'node:url';

/**
 * The flags the `crawl` command starts node with: the first line of cli/main.ts says them
 * again (a shebang cannot import), and a unit test checks that the two agree. Whatever starts
 * a crawl process itself (the benches) passes these, so it measures what `crawl` runs.
 *
 * --single-threaded-gc: V8 collects on the thread that allocates instead of helping itself
 * with four platform threads (parallel scavenges, concurrent marking and sweeping). On two
 * cores shared by the crawl, its extract thread and nats-server, those helpers cost more CPU
 * than the work they take over (docs/performance.md, "The collector on one thread"): in bench
 * crawls the helpers went from ~1.5 to ~0.5 ms of CPU a page and the main thread took ~0.4 ms
 * more. Pauses are longer; nothing in a crawl waits on one the way a request handler would.
 *
 * --max-semi-space-size=8: the new space of each isolate (the main thread's and each extract
 * thread's; two semi-spaces) grows to 16 MB instead of V8's 32. A crawl's young objects are
 * messages and requests in flight. In six interleaved bench pairs peak RSS fell from a median
 * of 565 to 497 MB, for ~0.15 ms a page more of scavenging on the main thread (twice the
 * scavenges, each cheaper) and a median of 1.02 times the CPU a page (docs/performance.md,
 * "The young generation"). 32 MB raised the peak by ~60 MB and saved no CPU.
 *
 * --heap-growing-percent=70: after each full collection V8 lets the old generation grow to
 * 1.7 times what survived before the next, instead of a factor of up to 4 it picks from how
 * fast the program allocates; a crawl allocates fast, so the heap kept ~50 MB it did not need.
 * In four interleaved bench pairs peak RSS fell from a median of 528 to 486 MB for 1.05 times
 * the CPU a page (docs/performance.md, "The old generation"); 50 cost 1.15 times the CPU, 100
 * saved too little memory to matter.
 */
export const CRAWL_NODE_FLAGS: readonly string[] = ['--single-threaded-gc', '--max-semi-space-size=8', '--heap-growing-percent=70'];

const CRAWL_SCRIPT = fileURLToPath(new URL('./main.js', import.meta.url));

/**
 * node's arguments for a crawl process started the way the `crawl` command starts itself:
 * CRAWL_NODE_FLAGS, then `nodeArgs` (which may undo them or add a profiler), the script, `args`.
 */
export const crawlProcessArgs = (args: readonly string[], nodeArgs: readonly string[] = []): string[] => [...CRAWL_NODE_FLAGS, ...nodeArgs, CRAWL_SCRIPT, ...args];

/** The first line of cli/main.ts for these flags. */
export const crawlShebang = (): string => `#!/usr/bin/env -S node ${CRAWL_NODE_FLAGS.join(' ')}`;
