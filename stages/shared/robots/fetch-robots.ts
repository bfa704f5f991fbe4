import { HttpFetchError, type HttpClient } from '../../../ports/http.js';
import { hostDead, refusedEverywhere } from '../politeness/index.js';
import type { CrawlSettings } from '../../../pipeline/settings.js';
import type { Emit } from '../../../ports/streams.js';
import { exchangeEmit, type ExchangeFacts } from '../messages/exchange-emit.js';
import { stableId } from '../messages/stage-ids.js';
import { recordFromResponse } from './robots-fetch-policy.js';
import type { RobotsRecord } from './robots-rules.js';

const MAX_ROBOTS_REDIRECTS = 5;

/**
 * Fetches http(s)://host/robots.txt, following up to 5 redirects (RFC 9309 §2.3.1.2).
 * With `archive`, every request (each redirect hop, a failure too) is handed to it for the
 * archive with the verdict. A failed publish loses only that archive copy, never the verdict.
 */
export async function fetchRobots(
  http: HttpClient,
  origin: string,
  settings: CrawlSettings,
  now: () => number,
  archive?: (exchanges: Emit[]) => Promise<unknown>,
): Promise<RobotsRecord> {
  const hops: ExchangeFacts[] = [];
  const done = async (record: RobotsRecord): Promise<RobotsRecord> => {
    if (archive) await archiveRobotsExchanges(archive, settings, hops, record);
    return record;
  };
  let url = `${origin}/robots.txt`;
  const host = new URL(origin).hostname;
  for (let hop = 0; hop <= MAX_ROBOTS_REDIRECTS; hop++) {
    const start = now();
    const captureId = `robots:${stableId(url, start, Math.random())}`;
    const facts = { kind: 'robots' as const, captureId, fetchId: captureId, url, host, domain: '', depth: 0, fetchTime: start, requestHeaders: undefined, userAgent: settings.userAgent };
    let res;
    try {
      res = await http.request({
        url,
        connectTimeoutMs: settings.connectTimeoutMs,
        headersTimeoutMs: settings.headersTimeoutMs,
        totalTimeoutMs: settings.totalTimeoutMs,
        // RFC 9309: only the first 500 KiB must be parsed; a little more is read to know it was cut
        maxBodyBytes: 512 * 1024,
        maxDecompressionRatio: settings.maxDecompressionRatio,
        minBytesPerSecond: settings.minTransferRate,
      });
    } catch (err) {
      hops.push({ ...facts, durationMs: now() - start, res: null, failure: (err as Error).message });
      // the client's errors already say what was being fetched
      const message = err instanceof HttpFetchError ? err.message : `fetching ${url}: ${(err as Error).message}`;
      const ends = err instanceof HttpFetchError ? hostDead(err, new URL(url).hostname) : null;
      const refused = err instanceof HttpFetchError ? refusedEverywhere(err) : null;
      return done(recordFromResponse({ error: message, ...(ends ? { ends } : {}), ...(refused ? { connectionRefused: refused } : {}) }, now()));
    }
    hops.push({ ...facts, durationMs: now() - start, res });
    const location = res.headers['location'];
    if (res.status >= 300 && res.status < 400 && location) {
      try {
        url = new URL(location, url).toString();
        hops[hops.length - 1]!.redirect = url;
      } catch {
        return done(recordFromResponse({ status: 404, body: '' }, now()));
      }
      continue;
    }
    return done(recordFromResponse({ status: res.status, body: res.body }, now()));
  }
  // too many redirects: RFC 9309 treats robots.txt as unavailable (4xx): no rules
  return done(recordFromResponse({ status: 404, body: '' }, now()));
}

async function archiveRobotsExchanges(archive: (exchanges: Emit[]) => Promise<unknown>, settings: CrawlSettings, hops: ExchangeFacts[], record: RobotsRecord): Promise<void> {
  const verdict = `${record.kind}: ${record.reason}`;
  try {
    await archive(hops.map((h) => exchangeEmit({ ...h, robots: verdict }, settings.partitions)));
  } catch {
    // the robots verdict stands without its archive copy; the next refresh is archived again
  }
}
