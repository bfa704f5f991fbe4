import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StageMetrics } from '../../pipeline/metrics.js';
import { parseSettings } from '../../pipeline/settings.js';
import { createLogger } from '../../pipeline/logger.js';
import { freePort } from '../../ops/nats/embedded-server.js';
import { startStageThread } from '../../app/stage-thread.js';

describe('a stage thread', () => {
  it('its metrics are totalled and served with the main thread\'s, series by series', async () => {
    const main = new StageMetrics();
    main.count('fetch', 'responses', '2xx', 3);
    main.handled('fetch', 'emitted', 0.01);
    const thread = new StageMetrics();
    thread.count('persist', 'rows', 'page', 5);
    thread.handled('persist', 'emitted', 0.01);
    thread.handled('fetch', 'emitted', 0.01); // the same series in both: summed
    main.absorb('page stages', await thread.snapshot());

    assert.equal(main.total('persist', 'rows', 'page'), 5);
    assert.equal(main.total('fetch', 'responses'), 3);
    assert.equal(main.total('fetch', 'messages'), 2);
    const text = await main.exposition();
    assert.match(text, /^crawler_persist_rows_total\{outcome="page"\} 5$/m);
    assert.match(text, /^crawler_fetch_responses_total\{outcome="2xx"\} 3$/m);
    assert.match(text, /^crawler_stage_messages_total\{stage="fetch",outcome="emitted"\} 2$/m);

    // a newer snapshot of the same thread replaces the older one
    thread.count('persist', 'rows', 'page', 1);
    main.absorb('page stages', await thread.snapshot());
    assert.equal(main.total('persist', 'rows', 'page'), 6);
  });

  it('that cannot start rejects with its reason (the server it cannot reach)', async () => {
    const closedPort = await freePort();
    const metrics = new StageMetrics();
    const log = createLogger('test', { level: 'silent' });
    await assert.rejects(
      startStageThread({ url: `nats://127.0.0.1:${closedPort}`, security: {}, settings: parseSettings({ crawlId: 't' }), stages: ['persist'], outDir: '/nonexistent', log: { name: 'test', level: 'silent' } }, metrics, log),
      /127\.0\.0\.1/,
    );
  });
});
