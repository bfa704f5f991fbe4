import { awaitJetStream, redactUrl } from '../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { readStoredSettings, storeSettings } from '../app/settings-store.js';
import { applyCrawlPartitions, applyCrawlTopology } from '../ops/nats/crawl-topology.js';
import { mergeSettings, type SettingsFlags } from './settings-flags.js';
import { UsageError } from './usage-error.js';
import { connectForCommand, deniedPermission, natsUrlFromEnv } from './connection.js';
import { retentionPolicy, type RetentionFlags } from './retention-flags.js';
import { ReplicasError } from '../ops/nats/topology.js';

/**
 * `crawl topology apply`: streams, consumers and KV buckets on NATS_URL, idempotently, and the
 * crawl settings (stored ones overridden by the flags given) that workers started later use.
 */
export async function applyTopologyCommand(o: SettingsFlags & RetentionFlags & { replicas?: number }): Promise<number> {
  const url = natsUrlFromEnv();
  if (!url) throw new UsageError('set NATS_URL to the server or cluster to apply the topology to');
  mergeSettings(null, o); // invalid flags are usage errors before anything is touched
  const retention = retentionPolicy(o);
  const nc = await awaitJetStream(await connectForCommand(url, 'crawl topology'), 'crawl topology');
  try {
    const jsm = await applyCrawlTopology(nc, { retention, replicas: o.replicas }).catch((err: unknown) => {
      // asked for more copies than the servers can keep: nothing was changed
      if (err instanceof ReplicasError) throw new UsageError(`--replicas ${o.replicas}: ${err.message}`);
      throw err;
    });
    const kv = await openKvStores(nc);
    const settings = mergeSettings(await readStoredSettings(kv), o);
    await storeSettings(kv, settings);
    await applyCrawlPartitions(jsm, settings.partitions);
    process.stdout.write(`topology applied on ${redactUrl(url)}${o.replicas ? ` (${o.replicas} replicas)` : ''}\n`);
  } catch (err) {
    const denied = deniedPermission(nc);
    if (denied) throw new UsageError(`${denied} (applying the topology needs the operator role: ops/nats/accounts.conf)`);
    throw err;
  } finally {
    await nc.drain().catch(() => undefined);
  }
  return 0;
}
