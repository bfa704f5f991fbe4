import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StageMetrics } from '../../pipeline/metrics.js';
import { MetricsPortInUseError, startMetricsServer } from '../../pipeline/metrics-server.js';
import { KvConflictError } from '../../ports/kv.js';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { timedKvStore } from '../../pipeline/timed-kv.js';

describe('metrics server', () => {
  it('serves /metrics, /healthz and /readyz, and nothing else', async () => {
    const metrics = new StageMetrics();
    metrics.handled('fetch', 'emitted', 0.02);
    metrics.count('fetch', 'responses', '2xx');
    let why: string | null = 'starting';
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics, notReady: () => why });
    try {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      assert.match(text, /^crawler_stage_messages_total\{stage="fetch",outcome="emitted"\} 1$/m);
      assert.match(text, /^crawler_stage_handle_seconds_bucket\{le="0.025",stage="fetch",outcome="emitted"\} 1$/m);
      assert.match(text, /^crawler_fetch_responses_total\{outcome="2xx"\} 1$/m);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
      const notReady = await fetch(`${server.url}/readyz`);
      assert.equal(notReady.status, 503);
      assert.equal(await notReady.text(), 'not ready: starting\n');
      why = null;
      assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
      assert.equal((await fetch(`${server.url}/other`)).status, 404);
      assert.equal((await fetch(`${server.url}/metrics`, { method: 'POST' })).status, 405);
    } finally {
      await server.close();
    }
  });

  it('says which port is taken', async () => {
    const metrics = new StageMetrics();
    const first = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics, notReady: () => null });
    try {
      await assert.rejects(startMetricsServer({ host: '127.0.0.1', port: first.port, metrics, notReady: () => null }), (err: Error) => {
        assert.ok(err instanceof MetricsPortInUseError);
        assert.match(err.message, new RegExp(`metrics port 127.0.0.1:${first.port} is in use: give another --metrics-port`));
        return true;
      });
    } finally {
      await first.close();
    }
  });

  it('declares a stage counter before its first event, and a collected gauge reads at scrape time', async () => {
    const metrics = new StageMetrics();
    metrics.declare('fetch', 'retries');
    let value = 3;
    metrics.collectedGauge('crawler_test_waiting', 'test', ['reason'], async () => [{ labels: { reason: 'backoff' }, value }]);
    let text = await metrics.registry.metrics();
    assert.match(text, /^# TYPE crawler_fetch_retries_total counter$/m);
    assert.match(text, /^crawler_test_waiting\{reason="backoff"\} 3$/m);
    value = 5;
    text = await metrics.registry.metrics();
    assert.match(text, /^crawler_test_waiting\{reason="backoff"\} 5$/m);
  });

  it("reports the DNS cache's figures as they are at scrape time", async () => {
    const metrics = new StageMetrics();
    const stats = { hits: 7, negativeHits: 2, shared: 1, resolved: 4, inFlight: 3, queued: 12, entries: 4 };
    metrics.dnsCache(() => stats);
    let text = await metrics.registry.metrics();
    assert.match(text, /^# TYPE crawler_dns_lookups_total counter$/m);
    assert.match(text, /^crawler_dns_lookups_total\{answer="cache"\} 7$/m);
    assert.match(text, /^crawler_dns_lookups_total\{answer="negative_cache"\} 2$/m);
    assert.match(text, /^crawler_dns_lookups_total\{answer="resolved"\} 4$/m);
    assert.match(text, /^crawler_dns_lookups_queued 12$/m);
    stats.resolved = 9;
    stats.queued = 0;
    text = await metrics.registry.metrics();
    assert.match(text, /^crawler_dns_lookups_total\{answer="resolved"\} 9$/m);
    assert.match(text, /^crawler_dns_lookups_queued 0$/m);
    assert.match(text, /^crawler_dns_lookups_in_flight 3$/m);
    assert.match(text, /^crawler_dns_cache_entries 4$/m);
  });

  it('times KV operations by bucket, operation and outcome', async () => {
    const metrics = new StageMetrics();
    const kv = timedKvStore(new MemoryKvStore(), 'crawl-hosts', metrics);
    const rev = await kv.create('a', new Uint8Array([1]));
    await assert.rejects(kv.create('a', new Uint8Array([2])), KvConflictError);
    await kv.update('a', new Uint8Array([3]), rev);
    await kv.get('a');
    const text = await metrics.registry.metrics();
    for (const [op, outcome] of [['create', 'ok'], ['create', 'conflict'], ['update', 'ok'], ['get', 'ok']]) {
      assert.match(text, new RegExp(`^crawler_kv_operation_seconds_count\\{bucket="crawl-hosts",op="${op}",outcome="${outcome}"\\} 1$`, 'm'));
    }
  });
  it('gives a scrape-time metric to the newest reader when a node starts again in the same process', async () => {
    const metrics = new StageMetrics();
    const stats = (entries: number) => () => ({ hits: 0, negativeHits: 0, shared: 0, resolved: entries, inFlight: 0, queued: 0, entries });
    metrics.dnsCache(stats(1));
    metrics.collectedGauge('crawler_test_lag', 'lag', ['stream'], async () => [{ labels: { stream: 'A' }, value: 1 }]);
    // a worker's start failed half way and is tried again: the same names, new readers
    metrics.dnsCache(stats(7));
    metrics.collectedGauge('crawler_test_lag', 'lag', ['stream'], async () => [{ labels: { stream: 'A' }, value: 9 }]);
    const text = await metrics.registry.metrics();
    assert.match(text, /^crawler_dns_cache_entries 7$/m);
    assert.match(text, /^crawler_dns_lookups_total\{answer="resolved"\} 7$/m);
    assert.match(text, /^crawler_test_lag\{stream="A"\} 9$/m);
  });
});
