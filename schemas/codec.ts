import { Packr } from 'msgpackr';
import type { z } from 'zod';

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

/** Decodes msgpack bytes and validates them against a schema whose `v` field is the version. */
export function decodeMessage<S extends z.ZodType>(schema: S, bytes: Uint8Array, what: string): z.infer<S> {
  let raw: unknown;
  try {
    raw = packr.unpack(bytes);
  } catch (err) {
    throw new SchemaError(`decoding ${what}: not valid msgpack (${(err as Error).message})`, { cause: err });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || '(root)';
    throw new SchemaError(`decoding ${what}: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
