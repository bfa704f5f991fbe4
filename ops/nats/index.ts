export * from './edges.js';
export * from './topology.js';
export * from './embedded-server.js';
export * from './permissions.js';
export * from './max-payload.js';
