/** Stream retention from the flags, applied to a real nats-server; streams no flag names keep their limits. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyCrawlTopology } from '../../ops/nats/crawl-topology.js';
import { retentionPolicy } from '../../cli/retention-flags.js';
import { useTestNats } from '../support/nats-server.js';

const DAY_NS = 86_400e9;

describe('stream retention on a real nats-server', () => {
  const nats = useTestNats(null);
  const limits = async (stream: string) => {
    const c = (await nats.jsm.streams.info(stream)).config;
    return { days: c.max_age / DAY_NS, bytes: c.max_bytes };
  };

  it('new streams get the defaults, flags change them, and a run without flags keeps them', async () => {
    await applyCrawlTopology(nats.nc, { retention: retentionPolicy({}, {}) });
    assert.deepEqual(await limits('CRAWL_FETCHED'), { days: 14, bytes: -1 });
    assert.deepEqual(await limits('CRAWL_BODIES'), { days: 14, bytes: -1 });

    await applyCrawlTopology(nats.nc, { retention: retentionPolicy({ streamMaxAge: '7d', streamRetention: ['fetched=3d,1GB'] }, {}) });
    assert.deepEqual(await limits('CRAWL_FETCHED'), { days: 3, bytes: 1e9 });
    assert.deepEqual(await limits('CRAWL_RESULTS'), { days: 7, bytes: -1 });
    // the bodies stored beside fetched pages go with them, not with the global flag
    assert.deepEqual(await limits('CRAWL_BODIES'), { days: 3, bytes: 1e9 });

    await applyCrawlTopology(nats.nc, { retention: retentionPolicy({}, {}) });
    assert.deepEqual(await limits('CRAWL_FETCHED'), { days: 3, bytes: 1e9 }, 'kept');
    assert.deepEqual(await limits('CRAWL_RESULTS'), { days: 7, bytes: -1 }, 'kept');
    assert.deepEqual(await limits('CRAWL_BODIES'), { days: 3, bytes: 1e9 }, 'kept');
  });
});
