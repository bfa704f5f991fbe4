import { connect, type NatsConnection } from '@nats-io/transport-node';
import { waitForJetStream } from '../../ops/nats/jetstream-ready.js';
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

/**
 * How long a process that joins a crawl waits for JetStream before giving up: a cluster that
 * lost a server elects new leaders within seconds, and a worker started meanwhile should wait
 * for that rather than fail.
 */
export const JETSTREAM_WAIT_MS = 60_000;

/** Waits (up to JETSTREAM_WAIT_MS) until JetStream answers on `nc`, saying so once on stderr if it has to; closes `nc` when it gives up. */
export async function awaitJetStream(nc: NatsConnection, name: string): Promise<NatsConnection> {
  try {
    await waitForJetStream(nc, JETSTREAM_WAIT_MS, (why) => process.stderr.write(`${name}: waiting for JetStream (${why}); a cluster elects its leaders after losing a server\n`));
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw err;
  }
  return nc;
}

/** connectNats, then awaitJetStream. */
export async function connectJetStream(url: string, name: string): Promise<NatsConnection> {
  return awaitJetStream(await connectNats(url, name), name);
}
