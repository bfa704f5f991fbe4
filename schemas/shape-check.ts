import type { z } from 'zod';

/**
 * A checker of a decoded message against its zod schema that only reads: it answers "does
 * this value have the schema's shape" and, when not, where and what was expected. It is for
 * the internal edges, whose messages our own stages wrote: zod's parse there copied every
 * message (and every link of a page) into a new object to strip unknown keys, to return what
 * msgpack had decoded (docs/performance.md#internal-edges-checked-without-zods-parse).
 *
 * Same verdicts as zod's parse on the types the message schemas use; types it does not
 * model (custom, union, tuple, unknown, ...) and checks other than a number's int, positive,
 * nonnegative, min and max (a string's min length, say) are handed to zod value by value.
 * Unlike zod it keeps unknown keys inside a message; withoutUnknownKeys drops them at the
 * top, where stages spread messages into others (an `exchange` on a fetched page must not
 * ride on into the extracted one).
 */
export type ShapeCheck = (value: unknown) => string | null;

interface Field {
  key: string;
  check: ShapeCheck;
}

const checkers = new WeakMap<z.ZodType, ShapeCheck>();

/** The checker of a schema, built once per schema. Returns null when the value fits, else "path: what was expected". */
export function shapeCheckOf(schema: z.ZodType): ShapeCheck {
  let check = checkers.get(schema);
  if (!check) {
    check = build(schema);
    checkers.set(schema, check);
  }
  return check;
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  values?: readonly unknown[];
  entries?: Record<string, unknown>;
  checks?: readonly unknown[];
}

const defOf = (t: z.ZodType) => (t as unknown as { _zod: { def: Def } })._zod.def;

function build(t: z.ZodType): ShapeCheck {
  const def = defOf(t);
  switch (def.type) {
    case 'optional': {
      const inner = build(def.innerType!);
      return (v) => (v === undefined ? null : inner(v));
    }
    case 'nullable': {
      const inner = build(def.innerType!);
      return (v) => (v === null ? null : inner(v));
    }
    case 'string':
      if (def.checks && def.checks.length > 0) return byZod(t);
      return (v) => (typeof v === 'string' ? null : expected('string', v));
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? null : expected('boolean', v));
    case 'number': {
      const bounds = numberChecks(def.checks ?? []);
      if (!bounds) return byZod(t);
      return (v) => {
        if (typeof v !== 'number' || !Number.isFinite(v)) return expected('number', v);
        return bounds(v) ? null : byZod(t)(v); // zod words the refusal
      };
    }
    case 'literal': {
      const values = def.values!;
      return (v) => (values.includes(v) ? null : `: expected ${values.map((x) => JSON.stringify(x)).join(' or ')}`);
    }
    case 'enum': {
      const values = new Set(Object.values(def.entries!));
      return (v) => (values.has(v) ? null : `: expected one of ${[...values].join(', ')}`);
    }
    case 'array': {
      const element = build(def.element!);
      return (v) => {
        if (!Array.isArray(v)) return expected('array', v);
        for (let i = 0; i < v.length; i++) {
          const bad = element(v[i]);
          if (bad !== null) return `.${i}${bad}`;
        }
        return null;
      };
    }
    case 'record': {
      const value = build(def.valueType!);
      return (v) => {
        if (!isPlainObject(v)) return expected('object', v);
        for (const k in v) {
          const bad = value(v[k]);
          if (bad !== null) return `.${k}${bad}`;
        }
        return null;
      };
    }
    case 'object': {
      const fields: Field[] = Object.entries(def.shape!).map(([key, f]) => ({ key, check: build(f) }));
      return (v) => {
        if (!isPlainObject(v)) return expected('object', v);
        for (const f of fields) {
          const bad = f.check(v[f.key]);
          if (bad !== null) return `.${f.key}${bad}`;
        }
        return null;
      };
    }
    default:
      return byZod(t);
  }
}

interface CheckDef {
  check?: string;
  format?: string;
  value?: number;
  inclusive?: boolean;
}

/**
 * The number checks the message schemas use (int, positive, nonnegative, min, max) as one
 * test, or null when there is another (then zod checks the value). Checked here because
 * zod's parse of one number allocates a result, and heading levels and retry counts in every
 * message add up (docs/performance.md#internal-edges-checked-without-zods-parse).
 */
function numberChecks(checks: readonly unknown[]): ((v: number) => boolean) | null {
  const tests: ((v: number) => boolean)[] = [];
  for (const c of checks) {
    const d = (c as { _zod: { def: CheckDef } })._zod.def;
    if (d.check === 'number_format' && d.format === 'safeint') tests.push(Number.isSafeInteger);
    else if (d.check === 'greater_than' && typeof d.value === 'number') {
      const { value, inclusive } = d;
      tests.push(inclusive ? (v) => v >= value : (v) => v > value);
    } else if (d.check === 'less_than' && typeof d.value === 'number') {
      const { value, inclusive } = d;
      tests.push(inclusive ? (v) => v <= value : (v) => v < value);
    } else return null;
  }
  return (v) => tests.every((t) => t(v));
}

function byZod(t: z.ZodType): ShapeCheck {
  return (v) => {
    const r = t.safeParse(v);
    return r.success ? null : `: ${r.error.issues[0]?.message ?? 'invalid'}`;
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

function expected(what: string, v: unknown): string {
  const got = v === null ? 'null' : v === undefined ? 'nothing' : Array.isArray(v) ? 'array' : v instanceof Uint8Array ? 'bytes' : typeof v;
  return `: expected ${what}, got ${got}`;
}

const knownKeys = new WeakMap<z.ZodType, Set<string>>();

/** The message with only its schema's top-level keys (the same object when it has no others). */
export function withoutUnknownKeys<T extends object>(schema: z.ZodType, value: T): T {
  const shape = defOf(schema).shape;
  if (!shape) return value; // not an object schema: nothing to drop
  let keys = knownKeys.get(schema);
  if (!keys) {
    keys = new Set(Object.keys(shape));
    knownKeys.set(schema, keys);
  }
  let unknown = false;
  for (const k in value) {
    if (!keys.has(k)) {
      unknown = true;
      break;
    }
  }
  if (!unknown) return value;
  const kept: Record<string, unknown> = {};
  for (const k in value) if (keys.has(k)) kept[k] = (value as Record<string, unknown>)[k];
  return kept as T;
}
