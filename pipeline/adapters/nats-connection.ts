import { connect, type NatsConnection } from '@nats-io/transport-node';
import { batchSocketWrites } from './nats-write-batching.js';
import { settleRequestsWithoutErrors } from './nats-request-settle.js';

/** `nats://a:4222,nats://b:4222` (as NATS_URL lists a cluster's servers) as the client's server list. */
export function natsServers(url: string): string[] {
  return url.split(',').map((s) => s.trim()).filter(Boolean);
}

/**
 * Connects with unlimited reconnects: a stage outlives a server restart and resumes. Given
 * one server of a cluster, the client learns the others from it (and reconnects to them when
 * it goes away); NATS_URL may also list several, comma-separated.
 * noAsyncTraces: the client otherwise builds an Error (with a stack trace) for every
 * request in case it fails; with a KV round trip per message that was a quarter of the CPU.
 * settleRequestsWithoutErrors: the same, for the Error it built after every successful reply.
 */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  settleRequestsWithoutErrors();
  try {
    const nc = await connect({ servers: natsServers(url), name, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
    batchSocketWrites(nc);
    return nc;
  } catch (err) {
    throw new Error(`connecting to NATS at ${url}: ${(err as Error).message}`, { cause: err });
  }
}
