import { connect, type NatsConnection } from '@nats-io/transport-node';

/** Connects with unlimited reconnects: a stage outlives a server restart and resumes. */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  try {
    return await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  } catch (err) {
    throw new Error(`connecting to NATS at ${url}: ${(err as Error).message}`, { cause: err });
  }
}
