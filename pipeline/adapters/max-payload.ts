/**
 * What the crawler needs of a server's `max_payload` (the largest message it accepts; 1 MB
 * unless its configuration says otherwise). A page's body larger than a message can carry is
 * stored beside it in chunks (CRAWL_BODIES), so a page of any size travels; what must still
 * fit one message is everything else: a fetched page's headers, URL and fields, an extracted
 * page's text and links (which extract cuts to fit), and the seen set's snapshot chunks
 * (512 KiB each, stages/seen-filter/snapshot-store.ts).
 */

/** nats-server's default: below it the seen set's snapshots do not fit, and nothing here is tested below it. */
export const MIN_MAX_PAYLOAD_BYTES = 1024 * 1024;

/** The server cannot carry the crawler's messages: its max_payload must be raised. */
export class MaxPayloadError extends Error {
  override name = 'MaxPayloadError';
}

/** Refuses a server whose max_payload is below what the crawler's messages need. */
export function checkMaxPayload(maxPayloadBytes: number): void {
  if (maxPayloadBytes >= MIN_MAX_PAYLOAD_BYTES) return;
  throw new MaxPayloadError(
    `the NATS server's max_payload is ${maxPayloadBytes} bytes; the crawler needs at least ${MIN_MAX_PAYLOAD_BYTES} (nats-server's default, 1 MB): raise max_payload in the server's configuration (pages larger than a message are stored beside it whatever it is)`,
  );
}

/** A message larger than the server accepts: the error says so, naming max_payload, before the client refuses it more vaguely. */
export function tooLargeForServer(subject: string, bytes: number, maxPayloadBytes: number): MaxPayloadError {
  return new MaxPayloadError(`a message on ${subject} is ${bytes} bytes, more than the NATS server's max_payload (${maxPayloadBytes} bytes) accepts: raise max_payload in the server's configuration`);
}
