/**
 * `crawl serve`'s own metrics, on a real nats-server: API answers by transport and status
 * class, scheduling passes, the lease gauge and the jobs by state, all in a /metrics scrape.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startService } from '../../app/service/service.js';
import { API_SUBJECT } from '../../app/service/nats-api.js';
import { silentLogger } from '../../pipeline/logger.js';
import { StageMetrics } from '../../pipeline/metrics.js';
import { startMetricsServer } from '../../pipeline/metrics-server.js';
import { parseSettings } from '../../pipeline/settings.js';
import { useTestNats } from '../support/nats-server.js';

describe('crawl serve: service metrics', () => {
  const nats = useTestNats();

  it('counts API answers by transport and status class, scheduling passes, the lease and the jobs by state', async () => {
    const metrics = new StageMetrics();
    const service = await startService(nats.nc, parseSettings({ crawlId: 'service-metrics' }), { log: silentLogger(), host: '127.0.0.1', port: 0, metrics, tickMs: 50 });
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics, notReady: () => null });
    try {
      // declared before anything happened: the first scrape holds every family
      const first = await (await fetch(`${server.url}/metrics`)).text();
      for (const name of ['crawler_service_api_requests_total', 'crawler_service_scheduling_passes_total', 'crawler_service_job_runs_total', 'crawler_service_revisits_dispatched_total']) {
        assert.match(first, new RegExp(`^# TYPE ${name} counter$`, 'm'));
      }
      assert.equal((await fetch(`${service.url}/api/v1/jobs`)).status, 200);
      assert.equal((await fetch(`${service.url}/api/v1/jobs/job-nothere`)).status, 404);
      const reply = await nats.nc.request(`${API_SUBJECT}.list`, '', { timeout: 5000 });
      assert.equal((JSON.parse(reply.string()) as { status: number }).status, 200);
      await sleep(300);

      const text = await (await fetch(`${server.url}/metrics`)).text();
      assert.match(text, /^crawler_service_api_requests_total\{outcome="http_2xx"\} 1$/m);
      assert.match(text, /^crawler_service_api_requests_total\{outcome="http_4xx"\} 1$/m);
      assert.match(text, /^crawler_service_api_requests_total\{outcome="nats_2xx"\} 1$/m);
      assert.match(text, /^crawler_service_scheduling_passes_total\{outcome="leader"\} [1-9]\d*$/m);
      assert.match(text, /^crawler_service_leader 1$/m);
      for (const state of ['active', 'paused', 'cancelled', 'done']) assert.match(text, new RegExp(`^crawler_service_jobs\\{state="${state}"\\} 0$`, 'm'));
      // the job id asked for is no label value
      assert.doesNotMatch(text, /job-nothere/);
    } finally {
      await server.close();
      await service.stop();
    }
  });
});
