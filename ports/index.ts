/**
 * Ports: the interfaces through which stages reach the outside world (HTTP, key-value state,
 * streams, the WARC and row outputs), with their error types. Stages import these, never an
 * adapter; adapters in pipeline/adapters/ implement them.
 */
export * from './http.js';
export * from './kv.js';
export * from './streams.js';
export * from './bodies.js';
export * from './tls-failures.js';
export * from './warc-sink.js';
export * from './row-sink.js';
export * from './stream-admin.js';
