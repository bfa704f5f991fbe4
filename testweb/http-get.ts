// A direct HTTP GET against the test web: connects to 127.0.0.1:<port> (or another loopback
// address) and names the virtual host in the Host header (fetch() forbids setting Host, so
// this uses node:http).

import { request } from 'node:http';

export interface TestWebResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function getFromTestWeb(
  port: number,
  host: string,
  path: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'HEAD' = 'GET',
  /** Server address to connect to: 127.0.0.2 reaches the sharedip hosts' listener. */
  address = '127.0.0.1',
): Promise<TestWebResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: address, port, path, method, headers: { host, 'user-agent': 'testcrawler/1.0', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
