import { encodeDiscoveredLinks, type AdmittedUrl, type JobRecord } from '../../schemas/index.js';
import { subjectFor } from '../../pipeline/partition.js';
import type { Emit } from '../../pipeline/stage.js';

/**
 * A seed's turn (granted, or kept out by robots.txt): the sitemaps its host's robots.txt names (`/sitemap.xml` when it names
 * none) go to normalize to be fetched as sitemaps, if the crawl reads sitemaps (a job's own
 * `sitemaps`, else the crawl's setting, `--no-sitemaps`). The gate has the robots.txt in hand
 * here, and a seed's grant comes once per crawl id (a seed seen before is dropped by the seen
 * set: a resumed crawl does not read them again, a recrawl under a new crawl id does, and a
 * second seed of one host finds its sitemaps seen). The sitemap URLs then go the way of any
 * URL: scope, the seen set, robots.txt and the host's pacing. On a job's scheduled run (the
 * seed is a revisit without a copy to compare with) the sitemaps are revisits too, so they
 * are read again; the seed's adaptive revisits do not re-read them.
 */
export function sitemapsOfSeed(m: AdmittedUrl, job: JobRecord | null, crawlReadsSitemaps: boolean, listed: readonly string[], partitions: number): Emit[] {
  // a job's URL whose job record is gone reads nothing
  const reads = m.job === undefined ? crawlReadsSitemaps : job?.spec.sitemaps === true;
  if (!reads || m.depth !== 0 || m.source_url !== null || m.fetch_as === 'sitemap') return [];
  // the first run, and each scheduled run (its seeds carry no copy to compare with); not every revisit of the seed page
  const run = m.via === 'seed' || (m.via === 'revisit' && m.revisit?.digest === null && m.revisit.simhash === null);
  if (!run) return [];
  const urls = listed.length > 0 ? listed : [new URL('/sitemap.xml', m.url).toString()];
  return [
    {
      subject: subjectFor('links', m.host, partitions),
      msgId: `sitemaps:${m.fetch_id}`,
      data: encodeDiscoveredLinks({
        v: 1,
        source_url: m.url,
        depth: 0,
        via: m.revisit ? 'revisit' : 'sitemap',
        ...(job ? { job: job.id } : {}),
        links: urls.map((url) => ({ url, fetch_as: 'sitemap' as const, ...(m.revisit ? { revisit: { ...m.revisit, digest: null, simhash: null } } : {}) })),
      }),
    },
  ];
}
