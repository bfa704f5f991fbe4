/** Deployment: starting servers, applying the topology to them, the roles' permissions. */
export * from './topology.js';
export * from './embedded-server.js';
export * from './local-cluster.js';
export * from './permissions.js';
export * from './crawl-topology.js';
