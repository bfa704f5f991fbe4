/**
 * SURT keys as Common Crawl's cc-index writes them (python `surt` with its default
 * canonicalizer, simplified): scheme dropped, host lowercased and reversed with commas,
 * leading `www.` dropped, default port dropped, `)` then the path and query lowercased,
 * query parameters sorted, fragment dropped. `http://www.Example.com/A?b=1&a=2` →
 * `com,example)/a?a=2&b=1`. An IPv4 address is reversed like a name (`1,0,0,127)/`), as
 * python surt does by default (`reverse_ipaddr`) and warcio.js and wabac.js do: replay looks
 * a URL up by its own key, so a key made differently would not be found.
 */
export function surtKey(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url.toLowerCase();
  }
  let host = u.hostname.toLowerCase().replace(/\.$/, '');
  host = host.replace(/^www\d*\./, '');
  const reversed = host.startsWith('[') ? host : host.split('.').reverse().join(',');
  const port = u.port ? `:${u.port}` : '';
  const query = u.search.length > 1 ? '?' + u.search.slice(1).split('&').filter((p) => p !== '').sort().join('&') : '';
  return `${reversed}${port})${u.pathname}${query}`.toLowerCase();
}
