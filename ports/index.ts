/**
 * Ports: the interfaces through which stages reach the outside world (HTTP, key-value state,
 * streams), with their error types. Stages import these, never an adapter; adapters in
 * pipeline/adapters/ implement them.
 */
export * from './http.js';
export * from './kv.js';
export * from './streams.js';
export * from './bodies.js';
export * from './tls-failures.js';
