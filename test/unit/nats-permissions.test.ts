import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ACCOUNTS_CONF_HEADER, accountsConfig, passwordVariable, ROLES, rolePermissions, STAGE_ROLES } from '../../ops/nats/permissions.js';
import { EDGES, edgesPublishedBy, STAGE_NAMES, stageInput, subjectMatches } from '../../topology/index.js';
import { permissionDenialOf } from '../../pipeline/adapters/nats-connection.js';
import { errors } from '@nats-io/nats-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every stage of the topology with the consumer it reads and the edges it publishes to, as its `spec.ts` takes them. */
const SPECS = STAGE_NAMES.map((name) => ({ name, input: stageInput(name), emits: edgesPublishedBy(name) }));

describe('per-role NATS permissions (ops/nats/permissions.ts)', () => {
  test('ops/nats/accounts.conf is the generated configuration', () => {
    const expected = ACCOUNTS_CONF_HEADER + accountsConfig((role) => `password: $${passwordVariable(role)}`);
    assert.equal(readFileSync(path.join(ROOT, 'ops/nats/accounts.conf'), 'utf8'), expected, 'regenerate it: npm run build && node dist/scripts/write-accounts-conf.js');
  });

  test('every stage has a role, reading the consumer its spec declares', () => {
    assert.deepEqual(Object.keys(STAGE_ROLES).sort(), [...STAGE_NAMES].sort());
    for (const spec of SPECS) {
      const role = STAGE_ROLES[spec.name]!;
      assert.equal(role.stream, spec.input.stream, spec.name);
      assert.equal(role.durable, spec.input.durable, spec.name);
      assert.equal(role.partitioned === true, spec.input.partitioned === true, spec.name);
    }
  });

  test("a stage may publish on every edge its spec emits to, and on no stream it does not", () => {
    for (const { name, emits } of SPECS) {
      const publish = rolePermissions(name).publish;
      for (const edge of emits) {
        const subjects = EDGES[edge].subjects.filter((s) => s !== 'crawl.seeds');
        assert.ok(subjects.some((s) => publish.some((p) => subjectMatches(p, s))), `${name} publishes to ${edge}`);
      }
      assert.ok(!publish.some((p) => subjectMatches(p, 'crawl.seeds')), `${name} cannot seed`);
      const manages = /^\$JS\.API\.STREAM\.(CREATE|UPDATE|DELETE|PURGE|MSG\.DELETE|SNAPSHOT|RESTORE|PEER|LEADER)|^\$JS\.API\.CONSUMER\.DELETE\.CRAWL|^\$JS\.API\.STREAM\.>$/;
      // the host queues are a frontier: a served URL's message is deleted, by the gate or the fetcher that served it
      const removesServed = (p: string) => p === `$JS.API.STREAM.MSG.DELETE.${EDGES.hostq.stream}` && (name === 'politeness-gate' || name === 'fetch');
      assert.ok(!publish.some((p) => p === '>' || (manages.test(p) && !removesServed(p))), `${name} cannot manage streams`);
    }
    for (const name of ['politeness-gate', 'fetch']) assert.ok(rolePermissions(name).publish.includes(`$JS.API.STREAM.MSG.DELETE.${EDGES.hostq.stream}`), `${name} removes served URLs`);
  });

  test('the seeder publishes crawl.seeds only; the operator has the account', () => {
    assert.deepEqual(rolePermissions('seeder'), { publish: ['crawl.seeds', '$KV.crawl-scope.>', '$JS.API.INFO', '$JS.API.STREAM.LIST'], subscribe: ['_INBOX.>'] });
    assert.deepEqual(rolePermissions('operator').publish, ['>']);
    assert.throws(() => rolePermissions('nobody'), /no role nobody/);
    assert.equal(new Set(ROLES).size, ROLES.length);
  });
});

describe('a denied permission as the user reads it (permissionDenialOf)', () => {
  test('names the operation and the subject, from the error or its cause; nothing for other errors', () => {
    const denial = new errors.PermissionViolationError('Permissions Violation for Publish to "crawl.seeds"', 'publish', 'crawl.seeds');
    const expected = { operation: 'publish', subject: 'crawl.seeds', message: 'permission denied: this NATS user may not publish to crawl.seeds' };
    assert.deepEqual(permissionDenialOf(denial), expected);
    assert.deepEqual(permissionDenialOf(new Error('publish failed', { cause: denial })), expected);
    const sub = new errors.PermissionViolationError('Permissions Violation for Subscription to "crawl.x"', 'subscription', 'crawl.x');
    assert.equal(permissionDenialOf(sub)?.message, 'permission denied: this NATS user may not subscribe to crawl.x');
    assert.equal(permissionDenialOf(new Error('timeout')), undefined);
    assert.equal(permissionDenialOf(undefined), undefined);
  });
});
