/**
 * A directory of real HTML served over HTTPS as a web server would serve a documentation
 * site: HTTP/2 offered first (ALPN) with HTTP/1.1 beside it, `index.html` for a folder, a
 * redirect to the folder's URL for a path without its slash, an allow-all robots.txt, 404s.
 * For benches that compare crawlers on the same pages (bench:scrapy); nothing is cached or
 * rewritten, so every crawler gets the bytes on disk.
 */
import { promises as fsp } from 'node:fs';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TlsIdentity } from '../../testweb/test-ca.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.zip': 'application/zip',
  '.bz2': 'application/x-bzip2',
  '.epub': 'application/epub+zip',
  '.pdf': 'application/pdf',
};

export interface StaticSite {
  port: number;
  /** responses sent, all told */
  responses(): number;
  close(): Promise<void>;
}

export async function serveStaticSite(root: string, tls: TlsIdentity): Promise<StaticSite> {
  let responses = 0;
  const realRoot = await fsp.realpath(root);
  const handle = async (req: Http2ServerRequest, res: Http2ServerResponse) => {
    responses += 1;
    const url = new URL(req.url, 'https://site.invalid');
    if (url.pathname === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      return;
    }
    let file: string;
    try {
      file = path.join(realRoot, path.normalize(decodeURIComponent(url.pathname)));
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (file !== realRoot && !file.startsWith(realRoot + path.sep)) {
      res.writeHead(404).end();
      return;
    }
    try {
      const stat = await fsp.stat(file);
      if (stat.isDirectory()) {
        if (!url.pathname.endsWith('/')) {
          res.writeHead(301, { location: `${url.pathname}/` }).end();
          return;
        }
        file = path.join(file, 'index.html');
      }
      const body = await fsp.readFile(file);
      res.writeHead(200, { 'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream', 'content-length': body.length });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  };
  const server: Http2SecureServer = createSecureServer({ key: tls.key, cert: tls.cert, allowHTTP1: true }, (req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    responses: () => responses,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
