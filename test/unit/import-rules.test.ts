import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkImports, readProductSources, readToolSources, type SourceFile } from '../support/import-rules.js';

// tests run from dist/test/unit: the sources are three folders up
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('import rules: the layering of the code', () => {
  test('the product code keeps every rule', () => {
    const files = readProductSources(ROOT);
    assert.ok(files.length > 100, `read the sources (${files.length} files under ${ROOT})`);
    const violations = checkImports(files);
    assert.deepEqual(violations.map((v) => `${v.file} imports ${v.imports}: ${v.rule}`), []);
  });

  test('bench/ and scripts/ keep their rule: they do not import test/', () => {
    const files = readToolSources(ROOT);
    assert.ok(files.some((f) => f.path.startsWith('bench/')) && files.some((f) => f.path.startsWith('scripts/')), `read bench/ and scripts/ (${files.length} files)`);
    assert.deepEqual(checkImports(files).map((v) => `${v.file} imports ${v.imports}: ${v.rule}`), []);
  });

  // each rule, broken once, is caught: the check above can fail
  const file = (p: string, ...imports: string[]): SourceFile => ({ path: p, text: imports.map((i) => `import { x } from '${i}';`).join('\n') });
  for (const [what, f, rule] of [
    ['pipeline imports a stage', file('pipeline/runner.ts', '../stages/fetch/handle.js'), /pipeline\/ may import .* not stages\//],
    ['pipeline imports the composition root', file('pipeline/runner.ts', '../app/node.js'), /not app\//],
    ['ops imports a stage', file('ops/nats/topology.ts', '../../stages/fetch/spec.js'), /ops\/ may import .* not stages\//],
    ['a stage imports an adapter', file('stages/fetch/handle.ts', '../../pipeline/adapters/http/client.js'), /through ports\//],
    ['a stage imports another stage', file('stages/fetch/handle.ts', '../politeness-gate/host-scheduler.js'), /not stages\/politeness-gate\//],
    ['shared imports a stage', file('stages/shared/politeness/failure-policy.ts', '../../fetch/handle.js'), /stages\/shared\/ imports no stage/],
    ['a stage reaches behind the politeness module', file('stages/fetch/handle.ts', '../shared/politeness/host-slot.js'), /through stages\/shared\/politeness\/index\.ts only/],
    ['a stage imports the NATS client', file('stages/fetch/handle.ts', '@nats-io/jetstream'), /server libraries/],
    ['a stage drives a browser itself', file('stages/render/handle.ts', 'playwright-core'), /server libraries/],
    ['a stage imports deployment code', file('stages/fetch/spec.ts', '../../ops/nats/topology.js'), /stages\/ names streams through topology\/, never ops\//],
    ['pipeline imports deployment code', file('pipeline/runner.ts', '../ops/nats/permissions.js'), /pipeline\/ names streams through topology\/, never ops\//],
    ['the topology imports pipeline', file('topology/stages.ts', '../pipeline/stage.js'), /topology\/ may import nothing of ours/],
    ['the topology imports a library', file('topology/edges.ts', 'node:path'), /topology\/ imports nothing, no library either/],
    ['ops imports the metrics library', file('ops/nats/topology.ts', 'prom-client'), /only pipeline\/, app\/ and cli\/ import prom-client/],
    ['a stage imports the S3 client', file('stages/archive/sink.ts', '@aws-sdk/client-s3'), /server libraries/],
    ['a stage writes files itself', file('stages/archive/sink.ts', 'node:fs'), /does not use the file system/],
    ['a stage writes files itself (fs/promises)', file('stages/persist/handle.ts', 'node:fs/promises'), /does not use the file system/],
    ['a command publishes with the NATS client', file('cli/seed.ts', '@nats-io/jetstream'), /in cli\/ and app\/ only cli\/connection\.ts, .* import @nats-io\/jetstream/],
    ['app code holds a NATS connection', file('app/replay.ts', '@nats-io/transport-node'), /they wire a process/],
    ['a port imports pipeline', file('ports/http.ts', '../pipeline/settings.js'), /ports\/ may import nothing of ours/],
    ['product code imports a test', file('cli/main.ts', '../test/support/crawl-cli.js'), /only product folders/],
    ['a bench imports a test helper', file('bench/render-bench.ts', '../test/support/fake-context.js'), /bench\/ and scripts\/ do not import test\//],
    ['a script imports a test helper', file('scripts/compact-memory-repro.ts', '../test/support/large-pages.js'), /bench\/ and scripts\/ do not import test\//],
    ['bench support imports a test helper', file('bench/support/memory-context.ts', '../../test/support/nats-server.js'), /bench\/ and scripts\/ do not import test\//],
  ] as const) {
    test(`caught: ${what}`, () => {
      const violations = checkImports([f]);
      assert.equal(violations.length, 1, JSON.stringify(violations));
      assert.match(violations[0]!.rule, rule);
    });
  }

  test('allowed: a bench imports product code, its own support and scripts', () => {
    const f = file('bench/render-bench.ts', '../pipeline/adapters/browser/chromium-renderer.js', './support/memory-context.js', '../scripts/extraction-eval.js', '../testweb/index.js');
    assert.deepEqual(checkImports([f]), []);
  });

  test('allowed: a stage imports shared, pipeline, ports, schemas and the topology', () => {
    const f = file('stages/fetch/handle.ts', '../shared/politeness/index.js', '../../pipeline/stage.js', '../../ports/http.js', '../../schemas/index.js', '../../topology/index.js', './spec.js', 'parse5');
    assert.deepEqual(checkImports([f]), []);
  });

  test('allowed: the files that wire a process import the NATS client', () => {
    for (const p of ['cli/connection.ts', 'app/node.ts', 'app/service/service.ts']) assert.deepEqual(checkImports([file(p, '@nats-io/jetstream', '@nats-io/transport-node')]), [], p);
  });

  test('allowed: deployment code applies the topology through the NATS client helpers', () => {
    const f = file('ops/nats/local-cluster.ts', '../../topology/index.js', '../../pipeline/adapters/jetstream-ready.js', '@nats-io/transport-node');
    assert.deepEqual(checkImports([f]), []);
  });
});
