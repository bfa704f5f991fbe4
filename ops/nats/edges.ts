/**
 * The edges of the dataflow: one retained stream per edge. Subjects after normalize are
 * `crawl.<edge>.<partition>`, partition = stable hash of the host (pipeline/partition.ts).
 * Seeds and discovered links are both "URLs into normalize", so they share one stream;
 * stored pages and other outcomes are both "results into persist", so they share one too:
 * that way every stage reads exactly one stream through one durable consumer.
 */
export const EDGES = {
  discovered: { stream: 'CRAWL_DISCOVERED', subjects: ['crawl.seeds', 'crawl.links.*'] },
  normalized: { stream: 'CRAWL_NORMALIZED', subjects: ['crawl.normalized.*'] },
  frontier: { stream: 'CRAWL_FRONTIER', subjects: ['crawl.frontier.*'] },
  /**
   * queues per host, `crawl.hostq.<p>.<hostkey>[.<lane>]`: URLs waiting for their host, read by
   * sequence. A frontier, not a log: no age limit (a URL waits as long as its host makes it), a
   * served URL's message is deleted, and a size limit refuses new URLs instead of dropping
   * waiting ones (`queue`).
   */
  hostq: { stream: 'CRAWL_HOSTQ', subjects: ['crawl.hostq.*.*', 'crawl.hostq.*.*.*'], queue: true },
  ready: { stream: 'CRAWL_READY', subjects: ['crawl.ready.*'] },
  fetched: { stream: 'CRAWL_FETCHED', subjects: ['crawl.fetched.*', 'crawl.exchanges.*'] },
  /** fetched pages extract hands to the render stage (headless Chromium) */
  render: { stream: 'CRAWL_RENDER', subjects: ['crawl.render.*'] },
  extracted: { stream: 'CRAWL_EXTRACTED', subjects: ['crawl.extracted.*'] },
  results: { stream: 'CRAWL_RESULTS', subjects: ['crawl.pages.*', 'crawl.outcomes.*'] },
  /**
   * crawl jobs' revisit schedule, `crawl.revisit.<slot>.<job>`: one message per scheduled URL
   * under the time slot it is due in; the service takes each slot when it comes due and purges
   * it. A schedule, not a log: it keeps its messages until then, whatever the retention flags.
   */
  revisits: { stream: 'CRAWL_REVISITS', subjects: ['crawl.revisit.*.*'], schedule: true },
  deadletter: { stream: 'CRAWL_DEADLETTER', subjects: ['crawl.dlq.>'] },
  /**
   * bodies too large for their message (over what the server's max_payload leaves), in chunks,
   * `crawl.bodies.<p>`: a fetched page or exchange refers to its chunks by sequence. Kept with
   * the limits of the fetched stream, whose messages refer to them (`retainedWith`).
   */
  bodies: { stream: 'CRAWL_BODIES', subjects: ['crawl.bodies.*'], retainedWith: 'fetched' },
} as const;

export type EdgeName = keyof typeof EDGES;

/** The fetch stage's durable consumer: the gate watches how far behind it is (host-level priority). */
export const FETCH_DURABLE = 'fetch';
/** The consumers of fetched pages: the gate holds fetching back while either is far behind. */
export const FETCHED_READERS = ['extract', 'archive'] as const;

/** Subject prefixes a stage publishes under (the partition is appended). */
export const SUBJECTS = {
  seeds: 'crawl.seeds',
  links: 'crawl.links',
  normalized: 'crawl.normalized',
  frontier: 'crawl.frontier',
  hostq: 'crawl.hostq',
  ready: 'crawl.ready',
  fetched: 'crawl.fetched',
  /** every HTTP exchange that is not an HTML page (errors, redirects, 304s, other types, robots.txt, failures): read by archive only */
  exchanges: 'crawl.exchanges',
  render: 'crawl.render',
  extracted: 'crawl.extracted',
  pages: 'crawl.pages',
  outcomes: 'crawl.outcomes',
  revisit: 'crawl.revisit',
  deadletter: 'crawl.dlq',
  /** chunks of bodies too large for their message (see EDGES.bodies) */
  bodies: 'crawl.bodies',
} as const;

/** KV buckets: state that must outlive any stage process. */
export const BUCKETS = {
  /** per-host politeness slot and queue head (and per-IP leases under `_ip.<address>`): every gate watches it */
  hosts: 'crawl-hosts',
  /** the crawl-trap defences' tally per host: kept apart from `hosts` so its writes (two a page) are not sent to every gate's watch */
  traps: 'crawl-traps',
  /** robots.txt per host, with when it was fetched */
  robots: 'crawl-robots',
  /** the seen set: per-partition Bloom filter snapshots (in chunks) per crawl id, partition leases, the admitted counter */
  seen: 'crawl-seen',
  /** the seen set's exact record: a key per URL the seen-filter decided (crawl id + 128-bit hash), which confirms a Bloom hit */
  seenKeys: 'crawl-seen-keys',
  /** SimHash block index and content digests for near-duplicate detection */
  fingerprints: 'crawl-fingerprints',
  /** the seeds' (and their redirects') registrable domains, hosts and prefixes: the crawl's scope (stages/normalize/scope-keys.ts) */
  scope: 'crawl-scope',
  /** ETag and Last-Modified per URL, for conditional GETs when a URL is fetched again (a later crawl) */
  validators: 'crawl-validators',
  /** the crawl's settings, written by `crawl run`, read by workers */
  config: 'crawl-config',
  /** WARC-Payload-Digest -> first capture (URL, date, record id): identical-payload revisits */
  digests: 'crawl-digests',
  /** crawl jobs (`crawl serve`): one entry per job, and the service's leases and revisit cursor */
  jobs: 'crawl-jobs',
  /**
   * the seen-filters' in-link count per registrable domain (a key per domain, rewritten at each
   * power of two), which every gate watches to rank hosts: kept apart from `hosts` so that
   * these writes are not sent to every gate's watch of the host slots, and a gate that does not
   * rank by importance need not hear them
   */
  importance: 'crawl-importance',
} as const;
