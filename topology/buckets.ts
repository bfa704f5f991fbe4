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

export type BucketName = keyof typeof BUCKETS;
