import type { NatsConnection } from '@nats-io/transport-node';

interface ProtocolInternals {
  flushPending(): void;
}

/**
 * Makes the client write to its socket once per event-loop turn instead of once per
 * microtask checkpoint. The client (nats-core 3.x) flushes its outbound buffer in a
 * microtask, and our stages' publishes, acks and KV requests each run in their own promise
 * continuation, so nearly every command would go out in a write of its own (and cost
 * nats-server a read each; docs/performance.md#the-nats-clients-writes-and-requests). Deferring the
 * flush to `setImmediate` gathers everything the turn produced into one write; a command
 * waits at most until the current I/O callbacks finish.
 *
 * This reaches into the client's protocol handler (`nc.protocol.flushPending`), which is not
 * public API: if a client version changes it, this does nothing and says so.
 */
export function batchSocketWrites(nc: NatsConnection): boolean {
  const protocol = (nc as unknown as { protocol?: ProtocolInternals }).protocol;
  if (!protocol || typeof protocol.flushPending !== 'function') return false;
  const flushNow = protocol.flushPending.bind(protocol);
  let scheduled = false;
  protocol.flushPending = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flushNow();
    });
  };
  return true;
}
