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
 */
export const CRAWL_NODE_FLAGS: readonly string[] = ['--single-threaded-gc'];

/** The first line of cli/main.ts for these flags. */
export const crawlShebang = (): string => `#!/usr/bin/env -S node ${CRAWL_NODE_FLAGS.join(' ')}`;
