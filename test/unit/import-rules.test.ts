import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkImports, readProductSources, type SourceFile } from '../support/import-rules.js';

// tests run from dist/test/unit: the sources are three folders up
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('import rules: the layering of the code', () => {
  test('the product code keeps every rule', () => {
    const files = readProductSources(ROOT);
    assert.ok(files.length > 100, `read the sources (${files.length} files under ${ROOT})`);
    const violations = checkImports(files);
    assert.deepEqual(violations.map((v) => `${v.file} imports ${v.imports}: ${v.rule}`), []);
  });

  // each rule, broken once, is caught: the check above can fail
  const file = (p: string, ...imports: string[]): SourceFile => ({ path: p, text: imports.map((i) => `import { x } from '${i}';`).join('\n') });
  for (const [what, f, rule] of [
    ['pipeline imports a stage', file('pipeline/runner.ts', '../stages/fetch/handle.js'), /pipeline\/ may import .* not stages\//],
    ['pipeline imports the composition root', file('pipeline/runner.ts', '../app/node.js'), /not app\//],
    ['ops imports pipeline', file('ops/nats/topology.ts', '../../pipeline/stage.js'), /ops\/ may import nothing of ours/],
    ['a stage imports an adapter', file('stages/fetch/handle.ts', '../../pipeline/adapters/http/client.js'), /through ports\//],
    ['a stage imports another stage', file('stages/fetch/handle.ts', '../politeness-gate/host-scheduler.js'), /not stages\/politeness-gate\//],
    ['shared imports a stage', file('stages/shared/politeness/failure-policy.ts', '../../fetch/handle.js'), /stages\/shared\/ imports no stage/],
    ['a stage reaches behind the politeness module', file('stages/fetch/handle.ts', '../shared/politeness/host-slot.js'), /through stages\/shared\/politeness\/index\.ts only/],
    ['a stage imports the NATS client', file('stages/fetch/handle.ts', '@nats-io/jetstream'), /server libraries/],
    ['a stage drives a browser itself', file('stages/render/handle.ts', 'playwright-core'), /server libraries/],
    ['a stage imports the topology', file('stages/fetch/spec.ts', '../../ops/nats/topology.js'), /edges\.ts and consumer-spec\.ts only/],
    ['ops imports the metrics library', file('ops/nats/topology.ts', 'prom-client'), /only pipeline\/, app\/ and cli\/ import prom-client/],
    ['a stage imports the S3 client', file('stages/archive/sink.ts', '@aws-sdk/client-s3'), /server libraries/],
    ['a port imports pipeline', file('ports/http.ts', '../pipeline/settings.js'), /ports\/ may import nothing of ours/],
    ['product code imports a test', file('cli/main.ts', '../test/support/crawl-cli.js'), /only product folders/],
  ] as const) {
    test(`caught: ${what}`, () => {
      const violations = checkImports([f]);
      assert.equal(violations.length, 1, JSON.stringify(violations));
      assert.match(violations[0]!.rule, rule);
    });
  }

  test('allowed: a stage imports shared, pipeline, ports, schemas and edge names', () => {
    const f = file('stages/fetch/handle.ts', '../shared/politeness/index.js', '../../pipeline/stage.js', '../../ports/http.js', '../../schemas/index.js', '../../ops/nats/edges.js', './spec.js', 'parse5');
    assert.deepEqual(checkImports([f]), []);
  });
});
