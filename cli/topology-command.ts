import { connectNats } from '../pipeline/adapters/nats-connection.js';
import { openKvStores } from '../pipeline/adapters/nats-kv.js';
import { applyCrawlTopology, readStoredSettings, storeSettings } from '../pipeline/crawl-node.js';
import { defaultCrawlId, parseSettings } from '../pipeline/settings.js';
import { UsageError } from './usage-error.js';

/** `crawl topology apply`: streams, consumers and KV buckets on NATS_URL, idempotently; stores default settings if none. */
export async function applyTopologyCommand(): Promise<number> {
  const url = process.env.NATS_URL;
  if (!url) throw new UsageError('set NATS_URL to the server or cluster to apply the topology to');
  const nc = await connectNats(url, 'crawl topology');
  try {
    await applyCrawlTopology(nc);
    const kv = await openKvStores(nc);
    if (!(await readStoredSettings(kv))) await storeSettings(kv, parseSettings({ crawlId: defaultCrawlId() }));
    process.stdout.write(`topology applied on ${url}\n`);
  } finally {
    await nc.drain();
  }
  return 0;
}
