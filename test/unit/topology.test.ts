import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EDGES,
  edgeOf,
  edgesPublishedBy,
  FETCHED_READERS,
  isSubjectOf,
  partitionSubject,
  readersOf,
  STAGE_INPUTS,
  STAGE_NAMES,
  STAGES,
  subjectMatches,
  subjectPattern,
  SUBJECTS,
  type EdgeName,
  type SubjectName,
} from '../../topology/index.js';
import { STAGE_ROLES } from '../../ops/nats/permissions.js';

describe('the topology (topology/): one declaration, the rest derived', () => {
  test('every stage reads the consumer the servers of a running crawl hold (stream, durable, filter, ack wait, max pending)', () => {
    // a change here changes consumers on every running cluster, so it is pinned
    const row = (stream: string, durable: string, filterSubject: string, ackWaitMs: number, maxAckPending: number, partitioned = false) => ({
      stream,
      durable,
      filterSubject,
      ackWaitMs,
      maxAckPending,
      ...(partitioned ? { partitioned } : {}),
    });
    assert.deepEqual(STAGE_INPUTS, [
      row('CRAWL_DISCOVERED', 'normalize', '', 30_000, 2_000),
      row('CRAWL_NORMALIZED', 'seen-filter', 'crawl.normalized.*', 30_000, 1_000, true),
      row('CRAWL_FRONTIER', 'politeness-gate', 'crawl.frontier.*', 30_000, 2_000),
      row('CRAWL_READY', 'fetch', 'crawl.ready.*', 30_000, 2_000),
      row('CRAWL_RENDER', 'render', 'crawl.render.*', 60_000, 256),
      row('CRAWL_FETCHED', 'extract', 'crawl.fetched.>', 30_000, 1_000),
      row('CRAWL_EXTRACTED', 'simhash', 'crawl.extracted.*', 30_000, 2_000),
      row('CRAWL_RESULTS', 'persist', '', 30_000, 5_000),
      row('CRAWL_FETCHED', 'archive', '', 30_000, 2_000),
    ]);
    assert.deepEqual(STAGE_NAMES, STAGE_INPUTS.map((s) => s.durable));
  });

  test('every subject is held by exactly one edge, and its pattern is one of that edge\'s subjects or covers them', () => {
    for (const name of Object.keys(SUBJECTS) as SubjectName[]) {
      const holders = (Object.keys(EDGES) as EdgeName[]).filter((e) => EDGES[e].subjects.some((p) => isSubjectOf(name, p)));
      assert.deepEqual(holders, [edgeOf(name)], name);
      const pattern = subjectPattern(name);
      const shapes = EDGES[edgeOf(name)].subjects.filter((p) => isSubjectOf(name, p));
      assert.ok(shapes.includes(pattern as never) || pattern === `${SUBJECTS[name]}.>`, `${name}: ${pattern}`);
    }
    assert.equal(subjectPattern('hostq'), 'crawl.hostq.>');
    assert.equal(subjectPattern('revisit'), 'crawl.revisit.*.*');
    assert.equal(subjectPattern('seeds'), 'crawl.seeds');
    assert.equal(partitionSubject('fetched', 3), 'crawl.fetched.3');
    assert.ok(isSubjectOf('fetched', 'crawl.fetched.3'));
    // a rendered page is on a subject of its own, under fetched's prefix so that extract's one filter reads both
    assert.equal(partitionSubject('rendered', 3), 'crawl.fetched.rendered.3');
    assert.ok(isSubjectOf('rendered', 'crawl.fetched.rendered.3'));
    assert.ok(!isSubjectOf('fetched', 'crawl.fetched.rendered.3'));
    assert.equal(subjectPattern('fetched'), 'crawl.fetched.*');
    assert.ok(!isSubjectOf('fetched', 'crawl.fetchedx.3'));
  });

  test('a stage reads a subject of the edge it reads, and what it publishes is read by some stage or by sequence', () => {
    // read by sequence, not by a consumer: the host queues (the gate), the revisit schedule
    // (the service), large bodies (the readers of the messages that refer to them)
    const readBySequence = new Set<EdgeName>(['hostq', 'revisits', 'bodies']);
    for (const name of STAGE_NAMES) {
      const input: { edge: EdgeName; subjects?: readonly SubjectName[] } = STAGES[name].input;
      for (const subject of input.subjects ?? []) assert.equal(edgeOf(subject), input.edge, name);
      // its one filter reads its subjects and no other of the edge
      const filter = STAGE_INPUTS.find((s) => s.durable === name)!.filterSubject;
      for (const other of Object.keys(SUBJECTS) as SubjectName[]) {
        if (!input.subjects || edgeOf(other) !== input.edge) continue;
        assert.equal(subjectMatches(filter, partitionSubject(other, 3)), input.subjects.includes(other), `${name} reads ${other}`);
      }
      for (const edge of edgesPublishedBy(name)) {
        assert.ok(readersOf(edge).length > 0 || readBySequence.has(edge), `${name} publishes to ${edge}, which nothing reads`);
      }
    }
    assert.deepEqual(FETCHED_READERS, ['extract', 'archive']);
  });

  test('extract reads pages as fetched and as rendered through one filter, and not the other exchanges', () => {
    const filter = STAGE_INPUTS.find((s) => s.durable === 'extract')!.filterSubject;
    const reads = (subject: string) => subjectMatches(filter, subject);
    assert.ok(reads(partitionSubject('fetched', 3)));
    assert.ok(reads(partitionSubject('rendered', 3)));
    assert.ok(!reads(partitionSubject('exchanges', 3)));
    // the render stage may publish its pages and not pages as fetch sends them
    assert.ok(STAGE_ROLES.render!.outputs.includes('crawl.fetched.rendered.*'));
    assert.ok(!STAGE_ROLES.render!.outputs.some((p) => subjectMatches(p, partitionSubject('fetched', 3))));
  });

  test('each stage\'s role is derived from its entry: its consumer, and a subject for each one it publishes', () => {
    assert.deepEqual(Object.keys(STAGE_ROLES), STAGE_NAMES);
    for (const [i, name] of STAGE_NAMES.entries()) {
      const role = STAGE_ROLES[name]!;
      assert.equal(role.stream, STAGE_INPUTS[i]!.stream);
      assert.equal(role.durable, name);
      assert.deepEqual(role.outputs, STAGES[name].publishes.map(subjectPattern));
    }
  });
});
