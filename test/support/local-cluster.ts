import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { startLocalCluster, type LocalCluster } from '../../ops/nats/local-cluster.js';

/**
 * A real 3-node JetStream cluster on free loopback ports with temporary stores, for the
 * enclosing describe block: started before its tests, stopped and removed after them.
 */
export function useLocalCluster(): { readonly cluster: LocalCluster; readonly dir: string } {
  let cluster: LocalCluster | undefined;
  let dir: string | undefined;
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-cluster-'));
    cluster = await startLocalCluster(dir);
  });
  after(async () => {
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get cluster() {
      if (!cluster) throw new Error('useLocalCluster: not started yet (use it inside a test)');
      return cluster;
    },
    get dir() {
      return dir!;
    },
  };
}
