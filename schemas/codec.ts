import { Packr } from 'msgpackr';
import type { z } from 'zod';
import { shapeCheckOf, withoutUnknownKeys } from './shape-check.js';

/** A message that cannot be decoded or does not match its schema: dead-lettered, never dropped. */
export class SchemaError extends Error {
  override name = 'SchemaError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

// useRecords:false keeps messages plain msgpack maps, readable by any msgpack client.
const packr = new Packr({ useRecords: false, moreTypes: false });

export function encodeMessage(value: unknown): Uint8Array {
  return packr.pack(value);
}

/** msgpack bytes as a value, or a SchemaError naming `what` (for decoders that check the shape themselves). */
export function unpackOrThrow(bytes: Uint8Array, what: string): unknown {
  try {
    return packr.unpack(bytes);
  } catch (err) {
    throw new SchemaError(`decoding ${what}: not valid msgpack (${(err as Error).message})`, { cause: err });
  }
}

/**
 * Decodes a message of an internal edge (one our stages write and read): msgpack, then a
 * read-only check that it has the schema's shape (shape-check.ts), which keeps the clear
 * error and the dead-lettering of a malformed message without zod copying the message.
 */
export function decodeInternal<S extends z.ZodType>(schema: S, bytes: Uint8Array, what: string): z.infer<S> {
  return checkInternal(schema, unpackOrThrow(bytes, what), what);
}

/** The shape check of decodeInternal, on a value decoded some other way. */
export function checkInternal<S extends z.ZodType>(schema: S, raw: unknown, what: string): z.infer<S> {
  const bad = shapeCheckOf(schema)(raw);
  if (bad !== null) throw new SchemaError(`decoding ${what}: ${bad.startsWith('.') ? bad.slice(1) : `(root)${bad}`}`);
  return withoutUnknownKeys(schema, raw as object) as z.infer<S>;
}

/** Decodes msgpack bytes and validates them against a schema whose `v` field is the version (zod's parse: for what people write). */
export function decodeMessage<S extends z.ZodType>(schema: S, bytes: Uint8Array, what: string): z.infer<S> {
  const raw = unpackOrThrow(bytes, what);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || '(root)';
    throw new SchemaError(`decoding ${what}: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
