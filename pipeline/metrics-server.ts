import { createServer, type Server } from 'node:http';

/** Where `crawl run` and `crawl worker` serve /metrics unless told otherwise: the port OpenTelemetry's Prometheus exporter uses. */
export const DEFAULT_METRICS_PORT = 9464;
/** Loopback: metrics say what a crawl does, so they are reachable from elsewhere only when asked for (`--metrics-host`). */
export const DEFAULT_METRICS_HOST = '127.0.0.1';

export interface MetricsServerOptions {
  host: string;
  /** 0 is not "any port" here: the caller does not start a server for 0 */
  port: number;
  /** the process's metrics: their Prometheus text (StageMetrics, with its threads') and its content type */
  metrics: { exposition(): Promise<string>; readonly contentType: string };
  /** null when ready; otherwise why not (a sentence), sent with 503 on /readyz */
  notReady: () => string | null;
}

export interface MetricsServer {
  /** http://host:port */
  url: string;
  port: number;
  close(): Promise<void>;
}

export class MetricsPortInUseError extends Error {
  override name = 'MetricsPortInUseError';
}

/**
 * Serves the process's metrics and health for Prometheus and orchestrators:
 * - `GET /metrics`: the registry in Prometheus text format;
 * - `GET /healthz`: 200 while the process runs (a liveness probe);
 * - `GET /readyz`: 200 once its stages consume and while NATS is connected, else 503 and why.
 * Nothing else; no request ever changes anything.
 */
export async function startMetricsServer(o: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const route = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (route === '/metrics') {
      o.metrics.exposition().then(
        (text) => res.writeHead(200, { 'content-type': o.metrics.contentType }).end(text),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${err.message}\n`),
      );
      return;
    }
    if (route === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (route === '/readyz') {
      const why = o.notReady();
      res.writeHead(why ? 503 : 200, { 'content-type': 'text/plain' }).end(why ? `not ready: ${why}\n` : 'ready\n');
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: /metrics, /healthz and /readyz are served\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new MetricsPortInUseError(`metrics port ${o.host}:${o.port} is in use: give another --metrics-port (0 = none)`) : err),
    );
    server.listen(o.port, o.host, () => resolve());
  });
  // a scrape must never keep a stopping process alive
  server.unref();
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : o.port;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
