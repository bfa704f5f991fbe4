import type { HttpClient } from '../../pipeline/adapters/http-client.js';
import type { CrawlSettings } from '../../pipeline/settings.js';
import { recordFromResponse } from './robots-fetch-policy.js';
import type { RobotsRecord } from './robots-rules.js';

const MAX_ROBOTS_REDIRECTS = 5;

/** Fetches http(s)://host/robots.txt, following up to 5 redirects (RFC 9309 §2.3.1.2). */
export async function fetchRobots(http: HttpClient, origin: string, settings: CrawlSettings, now: () => number): Promise<RobotsRecord> {
  let url = `${origin}/robots.txt`;
  for (let hop = 0; hop <= MAX_ROBOTS_REDIRECTS; hop++) {
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
      return recordFromResponse({ error: `fetching ${url}: ${(err as Error).message}` }, now());
    }
    const location = res.headers['location'];
    if (res.status >= 300 && res.status < 400 && location) {
      try {
        url = new URL(location, url).toString();
      } catch {
        return recordFromResponse({ status: 404, body: '' }, now());
      }
      continue;
    }
    return recordFromResponse({ status: res.status, body: res.body }, now());
  }
  // too many redirects: RFC 9309 treats robots.txt as unavailable (4xx): no rules
  return recordFromResponse({ status: 404, body: '' }, now());
}
