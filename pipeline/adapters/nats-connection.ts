import { connect, type NatsConnection } from '@nats-io/transport-node';
import { batchSocketWrites } from './nats-write-batching.js';
import { settleRequestsWithoutErrors } from './nats-request-settle.js';

/**
 * Connects with unlimited reconnects: a stage outlives a server restart and resumes.
 * noAsyncTraces: the client otherwise builds an Error (with a stack trace) for every
 * request in case it fails; with a KV round trip per message that was a quarter of the CPU.
 * settleRequestsWithoutErrors: the same, for the Error it built after every successful reply.
 */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  settleRequestsWithoutErrors();
  try {
    const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
    batchSocketWrites(nc);
    return nc;
  } catch (err) {
    throw new Error(`connecting to NATS at ${url}: ${(err as Error).message}`, { cause: err });
  }
}
