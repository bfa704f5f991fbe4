import type { HttpResponse } from '../../ports/http.js';

/**
 * Scripts and stylesheets the renders of this process fetched, by URL: a site's pages share
 * them, and a polite crawler does not ask a host for its app.js once per page. Bounded in
 * bytes (least recently used go first) and in age. Per process: a restart fetches them again.
 */
export class SubresourceCache {
  private readonly entries = new Map<string, { res: HttpResponse; at: number }>();
  private bytes = 0;

  constructor(
    private readonly maxBytes = 32 * 1024 * 1024,
    /** a script changes with a deploy: ten minutes of a crawl is long enough to share it, short enough to see a new one */
    private readonly ttlMs = 10 * 60 * 1000,
  ) {}

  /** Whether a response may be kept: a complete 200 the server does not forbid storing. */
  static cacheable(resourceType: string, res: HttpResponse): boolean {
    return (resourceType === 'script' || resourceType === 'stylesheet') && res.status === 200 && !res.truncated && !/no-store/i.test(res.headers['cache-control'] ?? '');
  }

  get(url: string, now: number): HttpResponse | null {
    const hit = this.entries.get(url);
    if (!hit) return null;
    this.entries.delete(url);
    if (now - hit.at > this.ttlMs) {
      this.bytes -= hit.res.body.length;
      return null;
    }
    this.entries.set(url, hit); // most recently used last
    return hit.res;
  }

  put(url: string, res: HttpResponse, now: number): void {
    if (res.body.length > this.maxBytes / 8) return;
    const old = this.entries.get(url);
    if (old) {
      this.entries.delete(url);
      this.bytes -= old.res.body.length;
    }
    this.entries.set(url, { res, at: now });
    this.bytes += res.body.length;
    for (const [key, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(key);
      this.bytes -= e.res.body.length;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
