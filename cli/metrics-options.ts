import { isIP } from 'node:net';
import type { Command } from 'commander';
import type { Logger } from '../pipeline/logger.js';
import { StageMetrics } from '../pipeline/metrics.js';
import { DEFAULT_METRICS_HOST, DEFAULT_METRICS_PORT, MetricsPortInUseError, startMetricsServer, type MetricsServer } from '../pipeline/metrics-server.js';
import { parseIntOption, UsageError } from './usage-error.js';

/** `--metrics-port` and `--metrics-host` as commander hands them over. */
export interface MetricsOptions {
  metricsPort?: number;
  metricsHost?: string;
}

export function addMetricsOptions(cmd: Command): Command {
  return cmd
    .option('--metrics-port <port>', `serve /metrics, /healthz and /readyz on this port (default ${DEFAULT_METRICS_PORT}; 0 = none)`, parseIntOption('--metrics-port', 0, 65535))
    .option('--metrics-host <address>', `the address to serve them on (default ${DEFAULT_METRICS_HOST}: this machine only)`);
}

/** Checks the flags before anything starts: a bad address is a usage error. */
export function checkMetricsOptions(o: MetricsOptions): void {
  if (o.metricsHost !== undefined && o.metricsHost !== 'localhost' && isIP(o.metricsHost) === 0) {
    throw new UsageError(`--metrics-host must be an IP address (127.0.0.1, 0.0.0.0, ::1, ...) or localhost, got "${o.metricsHost}"`);
  }
}

/** A served registry with the process metrics in it, for a node to count into. */
export function servedMetrics(): StageMetrics {
  const metrics = new StageMetrics();
  metrics.collectProcessMetrics();
  return metrics;
}

/**
 * Starts the metrics server the flags ask for; null for `--metrics-port 0`. A port given
 * explicitly must be free; the default one may be taken (several workers on one machine),
 * and then this process serves none and says so.
 */
export async function serveMetrics(o: MetricsOptions, metrics: StageMetrics, notReady: () => string | null, log: Logger): Promise<MetricsServer | null> {
  const port = o.metricsPort ?? DEFAULT_METRICS_PORT;
  if (port === 0) return null;
  try {
    const server = await startMetricsServer({ host: o.metricsHost ?? DEFAULT_METRICS_HOST, port, metrics, notReady });
    log.info({ metrics: `${server.url}/metrics` }, 'serving metrics');
    return server;
  } catch (err) {
    if (err instanceof MetricsPortInUseError && o.metricsPort === undefined) {
      log.warn({ port }, 'the default metrics port is in use: this process serves no metrics (give --metrics-port)');
      return null;
    }
    throw new UsageError((err as Error).message);
  }
}
