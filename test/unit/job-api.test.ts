import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryKvStore } from '../../bench/support/memory-kv-store.js';
import { parseSettings } from '../../pipeline/settings.js';
import { JobStore } from '../../app/service/job-store.js';
import { validateJob, jobSpecFields } from '../../app/service/job-validation.js';
import { nextRunAfter } from '../../app/service/job-schedule.js';
import { runMessages } from '../../app/service/job-runs.js';
import { ROUTES } from '../../app/service/http-api.js';
import { NATS_OPERATIONS } from '../../app/service/nats-api.js';
import { JobApi } from '../../app/service/job-api.js';
import { decodeDiscoveredLinks, SCOPE_MODES, type JobRecord } from '../../schemas/index.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const settings = parseSettings({ crawlId: 'test', minDelayMs: 1000 });

describe('crawl jobs: what the API accepts', () => {
  for (const [what, body, field, reason] of [
    ['no seeds', { seeds: [] }, 'seeds', />=1 items/],
    ['a seed that is not a URL', { seeds: ['http://a.example/', 'not a url'] }, 'seeds[1]', /invalid_url|unsupported/],
    ['an unsupported scheme', { seeds: ['ftp://a.example/'] }, 'seeds[0]', /unsupported_scheme/],
    ['an unknown field', { seeds: ['http://a.example/'], maxdepth: 3 }, 'maxdepth', /unknown field/],
    ['an unknown field inside', { seeds: ['http://a.example/'], scope: { domain: ['x'] } }, 'scope.domain', /unknown field/],
    ['a cron that does not parse', { seeds: ['http://a.example/'], schedule: { kind: 'cron', cron: '61 * * * *' } }, 'schedule.cron', /does not parse/],
    ['a bad duration', { seeds: ['http://a.example/'], schedule: { kind: 'interval', every: 'soon' } }, 'schedule.every', /duration/],
    ['politeness looser than the crawl', { seeds: ['http://a.example/'], politeness: { min_delay_ms: 10 } }, 'politeness.min_delay_ms', /only be stricter.*1000 ms/],
    ['a regex that does not compile', { seeds: ['http://a.example/'], scope: { include: ['/([/'] } }, 'scope.include[0]', /./],
    ['a scope mode it does not know', { seeds: ['http://a.example/'], scope: 'everything' }, 'scope.mode', /"domain"\|"host"\|"prefix"\|"open"/],
    ['a scope mode it does not know, in the object', { seeds: ['http://a.example/'], scope: { mode: 'web' } }, 'scope.mode', /"domain"\|"host"\|"prefix"\|"open"/],
    ['domains with another mode', { seeds: ['http://a.example/'], scope: { mode: 'open', domains: ['a.example'] } }, 'scope.domains', /only with mode "domain".*"open"/],
  ] as const) {
    test(`refused with the field and the reason: ${what}`, () => {
      const v = validateJob(body, settings);
      assert.equal(v.ok, false);
      if (v.ok) return;
      assert.equal(v.error.field, field);
      assert.match(v.error.reason, reason);
    });
  }

  test('accepted: a scope mode, as a word or in the scope object', () => {
    const open = validateJob({ seeds: ['http://a.example/'], scope: 'open' }, settings);
    assert.ok(open.ok);
    assert.deepEqual(open.ok && open.spec.scope, { mode: 'open' });
    const host = validateJob({ seeds: ['http://a.example/'], scope: { mode: 'host', include: ['*.b.example/*'], exclude: ['*/private/*'] } }, settings);
    assert.ok(host.ok);
    assert.deepEqual(host.ok && host.spec.scope, { mode: 'host', include: ['*.b.example/*'], exclude: ['*/private/*'] });
  });

  test('accepted: defaults filled in, the scope is the seeds\' registrable domains', () => {
    const v = validateJob({ seeds: ['http://www.a.example/x', 'https://b.example/'], politeness: { min_delay_ms: 2000 } }, settings);
    assert.ok(v.ok);
    if (!v.ok) return;
    assert.deepEqual(v.scopeDomains.sort(), ['a.example', 'b.example']);
    assert.equal(v.spec.max_depth, 5);
    assert.deepEqual(v.spec.schedule, { kind: 'once' });
  });
});

describe('crawl jobs: schedules and runs', () => {
  test('once runs one time; an interval every so often; a cron at its next time (UTC)', () => {
    assert.equal(nextRunAfter({ kind: 'once' }, 1000), null);
    assert.equal(nextRunAfter({ kind: 'interval', every: '30s' }, 1000), 31_000);
    const t = Date.parse('2026-01-01T00:01:00Z');
    assert.equal(new Date(nextRunAfter({ kind: 'cron', cron: '*/5 * * * *' }, t)!).toISOString(), '2026-01-01T00:05:00.000Z');
    assert.equal(nextRunAfter({ kind: 'cron', cron: '*/2 * * * * *' }, t)! - t, 2000, 'six fields: seconds');
  });

  test('the first run publishes the seeds as the job\'s links; a later run as revisits, past the seen filter', () => {
    const job = { id: 'job-x', spec: validateJobOk({ seeds: ['http://a.example/', 'http://a.example/b', 'http://c.example/'] }), last_run_at: 5000 } as JobRecord;
    const first = runMessages(job, 1, 10_000, 16).map((e) => decodeDiscoveredLinks(e.data));
    assert.deepEqual(first.map((m) => [m.via, m.job, m.depth, m.source_url, m.links.map((l) => l.url)]).sort(), [
      ['seed', 'job-x', 0, null, ['http://a.example/', 'http://a.example/b']],
      ['seed', 'job-x', 0, null, ['http://c.example/']],
    ]);
    const again = runMessages(job, 2, 10_000, 16).map((e) => decodeDiscoveredLinks(e.data));
    assert.ok(again.every((m) => m.via === 'revisit' && m.links.every((l) => l.revisit?.due_at === 10_000 && l.revisit.digest === null)));
  });
});

describe('crawl jobs: operations', () => {
  const api = () => new JobApi({ store: new JobStore(new MemoryKvStore()), settings, status: undefined as never, now: () => 1000, seedGuard: async () => null });

  test('create answers 201 with a job id; list shows it; pause, resume, cancel move its state', async () => {
    const a = api();
    const created = await a.create({ seeds: ['http://a.example/'] }, 'http');
    assert.equal(created.status, 201);
    const job = created.body as JobRecord;
    assert.match(job.id, /^job-[0-9a-z]{10}$/);
    assert.equal(job.next_run_at, 1000, 'its first run is due at once');
    assert.deepEqual(((await a.list()).body as { jobs: JobRecord[] }).jobs.map((j) => j.id), [job.id]);
    assert.equal(((await a.pause(job.id)).body as JobRecord).state, 'paused');
    assert.equal(((await a.resume(job.id)).body as JobRecord).state, 'active');
    const cancelled = (await a.cancel(job.id)).body as JobRecord;
    assert.deepEqual([cancelled.state, cancelled.next_run_at], ['cancelled', null]);
    assert.equal((await a.resume(job.id)).status, 409, 'a cancelled job does not come back');
    assert.equal((await a.pause('job-none')).status, 404);
  });

  test('a bad job is a 400 with the field and the reason', async () => {
    const answer = await api().create({ seeds: ['http://a.example/'], nope: 1 }, 'nats');
    assert.deepEqual(answer, { status: 400, body: { error: { field: 'nope', reason: 'unknown field' } } });
  });
});

describe('crawl jobs: the OpenAPI document says what the service does', () => {
  const doc = JSON.parse(readFileSync(path.join(ROOT, 'docs/api/openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: { JobSpec: { properties: Record<string, unknown> } } };
  };

  test('every route is documented, and every documented operation is a route', () => {
    const routes = ROUTES.map((r) => `${r.method} ${r.path}`).sort();
    const documented = Object.entries(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
      .sort();
    assert.deepEqual(documented, routes);
  });

  test('the documented job fields are the fields the schema accepts', () => {
    assert.deepEqual(Object.keys(doc.components.schemas.JobSpec.properties).sort(), jobSpecFields().sort());
  });

  test('the documented scope is the schema\'s: its fields, and the modes in both of its forms', () => {
    const scope = doc.components.schemas.JobSpec.properties.scope as { oneOf: Array<{ properties?: Record<string, { enum?: string[] }>; enum?: string[] }> };
    const [object, word] = scope.oneOf;
    assert.deepEqual(Object.keys(object!.properties!).sort(), ['domains', 'exclude', 'include', 'mode']);
    assert.deepEqual(object!.properties!.mode!.enum, [...SCOPE_MODES]);
    assert.deepEqual(word!.enum, [...SCOPE_MODES]);
    for (const key of Object.keys(object!.properties!)) {
      const v = validateJob({ seeds: ['http://a.example/'], scope: { [key]: key === 'mode' ? 'host' : [] } }, settings);
      assert.ok(v.ok || v.error.field !== `scope.${key}` || v.error.reason !== 'unknown field', `scope.${key} is a field the schema knows`);
    }
  });

  test('the NATS operations are the ones the document names', () => {
    const info = (doc as unknown as { info: { description: string } }).info.description;
    for (const op of NATS_OPERATIONS) assert.match(info, new RegExp(`\\b${op}\\b`));
  });
});

function validateJobOk(body: unknown) {
  const v = validateJob(body, settings);
  assert.ok(v.ok);
  return v.spec;
}
