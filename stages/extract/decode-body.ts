/** Decodes a body with the charset from the header, else a <meta charset> in the first 1 KB, else UTF-8. */
export function decodeBody(body: Uint8Array, headerCharset: string | null): { text: string; charset: string } {
  let charset = headerCharset;
  if (!charset) {
    const head = new TextDecoder('latin1').decode(body.subarray(0, 1024));
    const meta = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.-]+)/i.exec(head);
    charset = meta?.[1]?.toLowerCase() ?? 'utf-8';
  }
  try {
    return { text: new TextDecoder(charset).decode(body), charset };
  } catch {
    // an unknown label: WHATWG says fall back to the default
    return { text: new TextDecoder('utf-8').decode(body), charset: 'utf-8' };
  }
}
