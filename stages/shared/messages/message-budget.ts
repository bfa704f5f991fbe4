/**
 * Keeping what a stage emits under the server's max_payload: a message that does not fit
 * cannot be published, and its input would be retried forever. Pages travel whole, so the
 * parts that can grow beyond the body (decoded text, absolute link URLs) get a byte budget.
 */
const encoder = new TextEncoder();

export const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');

/** `s` cut to at most `maxBytes` of UTF-8, on a character boundary. */
export function cutToBytes(s: string, maxBytes: number): string {
  if (s.length <= maxBytes / 3 || utf8Length(s) <= maxBytes) return s;
  const bytes = encoder.encode(s).subarray(0, Math.max(0, maxBytes));
  // drop a partial character at the end (continuation bytes are 10xxxxxx)
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1]! & 0xc0) === 0x80) end--;
  if (end > 0 && bytes[end - 1]! >= 0xc0) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** The leading items whose `size` adds up to at most `maxBytes`. */
export function withinBudget<T>(items: readonly T[], size: (item: T) => number, maxBytes: number): T[] {
  const out: T[] = [];
  let used = 0;
  for (const item of items) {
    used += size(item);
    if (used > maxBytes) break;
    out.push(item);
  }
  return out;
}

/** Room for everything but the budgeted parts (URLs, headers, fields) of a message. */
export const MESSAGE_SLACK_BYTES = 64 * 1024;
