/**
 * The dataflow's vocabulary, declared once: the edges (streams and their subjects), the KV
 * buckets, the stages (each one's consumer, what it publishes, the state it keeps) and the
 * API subjects. Plain data that imports nothing: stages and the pipeline name streams
 * through it, ops/nats/ applies it to a server and derives each role's permissions from it.
 */
export * from './edges.js';
export * from './buckets.js';
export * from './stage-input.js';
export * from './stages.js';
export * from './api.js';
