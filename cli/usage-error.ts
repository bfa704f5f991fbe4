/** Bad arguments, unreadable seed files, invalid seeds: a one-line message and exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function parseIntOption(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value.trim())) throw new UsageError(`${name} must be a whole number, got "${value}"`);
    const n = Number(value);
    if (n < min || n > max) throw new UsageError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

export const collect = (value: string, previous: string[] = []) => [...previous, value];

export function parseNumberOption(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+(\.\d+)?$/.test(value.trim())) throw new UsageError(`${name} must be a number, got "${value}"`);
    const n = Number(value);
    if (n < min || n > max) throw new UsageError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}
