import type { NatsConnection } from '@nats-io/transport-node';
import type { StageMetrics } from '../metrics.js';

export interface ConnectionState {
  /** whether the connection is up now (not closed, not between a disconnect and its reconnect) */
  connected(): boolean;
}

/**
 * Counts reconnects (into `metrics`, unless null: a node on the same connection counts them)
 * and tells whether the connection is up now, for /readyz.
 */
export function watchConnection(nc: NatsConnection, metrics: StageMetrics | null): ConnectionState {
  let connected = !nc.isClosed();
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') connected = false;
      else if (s.type === 'reconnect') {
        connected = true;
        metrics?.reconnected();
      } else if (s.type === 'close') connected = false;
    }
  })().catch(() => undefined);
  return { connected: () => connected && !nc.isClosed() };
}
