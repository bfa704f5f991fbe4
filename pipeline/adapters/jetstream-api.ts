import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The connection's JetStream management API, made on first use and kept once it succeeds.
 * Asked while JetStream is unavailable (a cluster electing a leader) it fails, and a failure
 * kept would fail every later call of the process with the same error: it is asked again.
 */
export function jetstreamApi(nc: NatsConnection): () => Promise<JetStreamManager> {
  let jsm: Promise<JetStreamManager> | undefined;
  return () =>
    (jsm ??= jetstreamManager(nc).catch((err: unknown) => {
      jsm = undefined;
      throw err;
    }));
}
