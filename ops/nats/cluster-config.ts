/**
 * The configuration of one server of a JetStream cluster, as `crawl cluster start` runs it on
 * loopback and as ops/nats/cluster/ ships it for docker-compose: one function writes both, so
 * they cannot drift apart (test/unit/ops-files.test.ts compares them).
 */
import { EMBEDDED_MAX_PAYLOAD } from './embedded-server.js';

export const CLUSTER_NAME = 'crawl';

export interface ClusterNodeConfig {
  /** server_name, unique in the cluster: JetStream places replicas by it */
  name: string;
  /** client listen address, host:port */
  listen: string;
  /** route listen address, host:port */
  clusterListen: string;
  /** every node's route URL (its own is ignored by the server) */
  routes: readonly string[];
  storeDir: string;
  /** the monitoring port (for KEDA's nats-jetstream scaler and `nats-server --signal`); none when absent */
  httpListen?: string;
}

export function clusterNodeConfig(c: ClusterNodeConfig): string {
  return [
    `# ${c.name}: one of the crawl's JetStream servers (written by ops/nats/cluster-config.ts)`,
    `server_name: ${c.name}`,
    `listen: "${c.listen}"`,
    ...(c.httpListen ? [`http: "${c.httpListen}"`] : []),
    `max_payload: ${EMBEDDED_MAX_PAYLOAD}`,
    `jetstream {`,
    `  store_dir: ${JSON.stringify(c.storeDir)}`,
    `  max_memory_store: 268435456`,
    `}`,
    `cluster {`,
    `  name: ${CLUSTER_NAME}`,
    `  listen: "${c.clusterListen}"`,
    `  routes: [`,
    ...c.routes.map((r) => `    ${JSON.stringify(r)}`),
    `  ]`,
    `}`,
    '',
  ].join('\n');
}

/** The three servers of ops/docker-compose.yml: hosts nats-1..3, client 4222, routes 6222, monitoring 8222. */
export function composeClusterConfigs(): Record<string, string> {
  const names = ['nats-1', 'nats-2', 'nats-3'];
  const files: Record<string, string> = {};
  for (const name of names) {
    files[`${name}.conf`] = clusterNodeConfig({
      name,
      listen: '0.0.0.0:4222',
      clusterListen: '0.0.0.0:6222',
      httpListen: '0.0.0.0:8222',
      routes: names.map((n) => `nats-route://${n}:6222`),
      storeDir: '/data/jetstream',
    });
  }
  return files;
}
