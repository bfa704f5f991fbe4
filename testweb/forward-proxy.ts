// A forward proxy for tests, on 127.0.0.1 (a free port): CONNECT tunnels (RFC 9110 §9.3.6) and
// plain forwarding of absolute-form requests (`GET http://host/path`), as an egress proxy
// does. It records every request it was asked (method, target, whether Proxy-Authorization
// was sent and right, its answer) and the local port of every connection it opened on a
// client's behalf, so a test can check from the test web's own log that each request came
// through the proxy (the server sees that port as the request's remote port).
//
//   const proxy = await startForwardProxy({ credentials: { user: 'u', password: 'p' } });
//   crawl run --proxy proxy.url --proxy-credentials-file ...
//   proxy.log()          // [{ method: 'CONNECT', target: '127.0.0.1:8080', status: 200, ... }]
//
// With `credentials` every request needs `Proxy-Authorization: Basic` of them (407 otherwise,
// with `Proxy-Authenticate`); `deny(target)` answers 403; a target that does not connect gets
// 502 (refused) or 504 (no answer within `connectTimeoutMs`). It connects to what it is
// asked, loopback included: it is a test tool on loopback, not a guard.

import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';

export interface ForwardProxyOptions {
  /** required of every request as `Proxy-Authorization: Basic base64(user:password)` */
  credentials?: { user: string; password: string };
  /** targets (`host:port` of a CONNECT, the URL of a forwarded request) answered 403 */
  deny?: (target: string) => boolean;
  /** a target that has not connected by then gets 504. Default 5000. */
  connectTimeoutMs?: number;
}

export interface ProxyRequestRecord {
  /** CONNECT, or the method of a forwarded request */
  method: string;
  /** CONNECT's `host:port` as asked, or a forwarded request's absolute URL */
  target: string;
  /** a Proxy-Authorization header came with it */
  sentAuthorization: boolean;
  /** ...and it was the one required (true when none is required) */
  authorized: boolean;
  /** what the proxy answered: 200 (tunnel open, or the origin's status), 403, 407, 502, 504; 499: the client left before the target connected */
  status: number;
  /** epoch ms when the request arrived */
  at: number;
  /** local port of the proxy's connection to the target, when one was made */
  outboundPort: number | null;
}

export interface ForwardProxy {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  log(): ProxyRequestRecord[];
  clearLog(): void;
  /** local ports of every connection the proxy opened to a target (the remote ports the target saw) */
  outboundPorts(): ReadonlySet<number>;
  close(): Promise<void>;
}

export async function startForwardProxy(opts: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const expected = opts.credentials ? `Basic ${Buffer.from(`${opts.credentials.user}:${opts.credentials.password}`).toString('base64')}` : null;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 5000;
  let log: ProxyRequestRecord[] = [];
  const outbound = new Set<number>();
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };

  const admit = (req: IncomingMessage, target: string): ProxyRequestRecord => {
    const sent = req.headers['proxy-authorization'];
    const record: ProxyRequestRecord = {
      method: req.method ?? '',
      target,
      sentAuthorization: sent !== undefined,
      authorized: expected === null || sent === expected,
      status: 0,
      at: Date.now(),
      outboundPort: null,
    };
    log.push(record);
    return record;
  };
  const refusal = (record: ProxyRequestRecord): number => (!record.authorized ? 407 : opts.deny?.(record.target) ? 403 : 0);

  /** connects to the target for a client; gives up when the client goes away first */
  const connectTarget = (host: string, port: number, record: ProxyRequestRecord, client: Socket, done: (err: { status: number } | null, socket: Socket | null) => void) => {
    const upstream = net.connect({ host: host.replace(/^\[|\]$/g, ''), port });
    track(upstream);
    let settled = false;
    const settle = (err: { status: number } | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.off('close', gone);
      if (err) {
        record.status = err.status;
        upstream.destroy();
      }
      if (!client.destroyed) done(err, err ? null : upstream);
      else upstream.destroy();
    };
    const gone = () => settle({ status: 499 });
    const timer = setTimeout(() => settle({ status: 504 }), connectTimeoutMs);
    client.once('close', gone);
    upstream.once('connect', () => {
      record.outboundPort = upstream.localPort ?? null;
      if (record.outboundPort !== null) outbound.add(record.outboundPort);
      settle(null);
    });
    upstream.on('error', () => settle({ status: 502 }));
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // forwarding: an absolute-form request
    const target = req.url ?? '';
    const record = admit(req, target);
    let url: URL;
    try {
      url = new URL(target);
      if (url.protocol !== 'http:') throw new Error('not http');
    } catch {
      record.status = 400;
      res.writeHead(400, { 'content-type': 'text/plain' }).end('forward proxy: expected an absolute http:// URL or CONNECT\n');
      return;
    }
    const refused = refusal(record);
    if (refused) {
      record.status = refused;
      res.writeHead(refused, refused === 407 ? { 'proxy-authenticate': 'Basic realm="testweb proxy"' } : {}).end();
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    connectTarget(url.hostname, Number(url.port || 80), record, req.socket, (err, socket) => {
      if (err) {
        res.writeHead(err.status).end();
        return;
      }
      const upstream = httpRequest({ createConnection: () => socket!, method: req.method, path: `${url.pathname}${url.search}`, headers: { ...headers, host: url.host } }, (answer) => {
        record.status = answer.statusCode ?? 0;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(upstream);
    });
  });
  server.on('connection', track);
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    // the server hands the socket over: its errors (a client that goes away) are ours now
    client.on('error', () => client.destroy());
    const target = req.url ?? '';
    const record = admit(req, target);
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
    const refused = m ? refusal(record) : 400;
    if (refused) {
      record.status = refused;
      const auth = refused === 407 ? 'Proxy-Authenticate: Basic realm="testweb proxy"\r\n' : '';
      client.end(`HTTP/1.1 ${refused} ${refused === 407 ? 'Proxy Authentication Required' : refused === 403 ? 'Forbidden' : 'Bad Request'}\r\n${auth}Content-Length: 0\r\n\r\n`);
      return;
    }
    connectTarget(m![1]!, Number(m![2]), record, client, (err, upstream) => {
      if (err) {
        client.end(`HTTP/1.1 ${err.status} ${err.status === 504 ? 'Gateway Timeout' : 'Bad Gateway'}\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      record.status = 200;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream!.write(head);
      upstream!.pipe(client);
      client.pipe(upstream!);
      const end = () => {
        upstream!.destroy();
        client.destroy();
      };
      upstream!.once('error', end);
      client.once('error', end);
      upstream!.once('close', end);
      client.once('close', end);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    log: () => log.slice(),
    clearLog: () => {
      log = [];
    },
    outboundPorts: () => outbound,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
