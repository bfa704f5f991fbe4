/**
 * A value made once per key object and kept as long as the key lives. Stages use it for
 * process-local caches tied to their context (one per process; a test's fresh fake
 * context gets fresh caches).
 */
export function oncePerObject<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const values = new WeakMap<K, V>();
  return (key) => {
    let value = values.get(key);
    if (value === undefined) {
      value = make(key);
      values.set(key, value);
    }
    return value;
  };
}
