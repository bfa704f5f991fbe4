/**
 * The operating files in ops/ that cannot run here (docker-compose, KEDA, the crawler's
 * image) or that configure other programs (Prometheus), checked against the code they
 * describe: the cluster configs are the ones the code writes, every consumer and stream a
 * KEDA example names is in the topology, every stage has a worker in the compose file and
 * Prometheus scrapes each of them, and promtool accepts the scrape config and the alerts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { composeClusterConfigs } from '../../ops/nats/cluster-config.js';
import { EDGES, STAGE_INPUTS } from '../../topology/index.js';
import { STAGE_NAMES } from '../../pipeline/stage.js';
import { DEFAULT_METRICS_PORT } from '../../pipeline/metrics-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const OPS = path.join(ROOT, 'ops');
const read = (rel: string) => readFileSync(path.join(OPS, rel), 'utf8');

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
}

describe('ops files', () => {
  test('the cluster configs for docker-compose are the ones ops/nats/cluster-config.ts writes', () => {
    const expected = composeClusterConfigs();
    assert.deepEqual(readdirSync(path.join(OPS, 'nats/cluster')).sort(), Object.keys(expected).sort());
    for (const [file, text] of Object.entries(expected)) assert.equal(read(`nats/cluster/${file}`), text, `ops/nats/cluster/${file} is out of date`);
  });

  test('every KEDA ScaledObject scales a stage on a consumer and stream of the topology', () => {
    const files = readdirSync(path.join(OPS, 'keda')).filter((f) => f.endsWith('.yaml'));
    assert.deepEqual(files.sort(), ['extract-scaledobject.yaml', 'fetch-scaledobject.yaml']);
    const streams = new Set<string>(Object.values(EDGES).map((e) => e.stream));
    for (const file of files) {
      const doc = parseYaml(read(`keda/${file}`)) as { apiVersion: string; kind: string; spec: { scaleTargetRef: { name: string }; triggers: Array<{ type: string; metadata: Record<string, string> }> } };
      assert.equal(doc.apiVersion, 'keda.sh/v1alpha1', file);
      assert.equal(doc.kind, 'ScaledObject', file);
      assert.ok(doc.spec.scaleTargetRef.name, `${file}: a scale target`);
      for (const t of doc.spec.triggers) {
        assert.equal(t.type, 'nats-jetstream', file);
        const m = t.metadata;
        for (const key of ['natsServerMonitoringEndpoint', 'account', 'stream', 'consumer', 'lagThreshold']) assert.ok(m[key], `${file}: ${key}`);
        assert.ok(streams.has(m.stream!), `${file}: stream ${m.stream} is in the topology`);
        const input = STAGE_INPUTS.find((s) => s.durable === m.consumer);
        assert.ok(input, `${file}: consumer ${m.consumer} is a stage's durable`);
        assert.equal(input.stream, m.stream, `${file}: consumer ${m.consumer} reads ${input.stream}`);
        assert.match(m.lagThreshold!, /^[1-9]\d*$/, `${file}: lagThreshold is a positive whole number`);
        // the monitoring port the compose file's servers open
        assert.match(m.natsServerMonitoringEndpoint!, /:8222$/);
      }
    }
  });

  test('docker-compose runs the 3-node cluster and one worker of every stage, scraped by Prometheus', () => {
    const compose = parseYaml(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> };
    const services = compose.services;
    for (const n of ['nats-1', 'nats-2', 'nats-3']) {
      assert.deepEqual(services[n]?.command, ['-c', `/etc/nats/${n}.conf`], n);
      assert.match(services[n]!.image!, /^nats:2\.9/, `${n} runs the 2.9 floor`);
    }
    assert.deepEqual(services.topology?.command?.slice(0, 4), ['topology', 'apply', '--replicas', '3']);
    const workers = Object.entries(services).filter(([, s]) => s.command?.[0] === 'worker');
    const stages = workers.map(([, s]) => s.command![s.command!.indexOf('--stage') + 1]).sort();
    assert.deepEqual(stages, [...STAGE_NAMES].sort(), 'one worker of each stage');
    for (const [name, s] of workers) {
      assert.equal(s.environment?.NATS_URL, 'nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222', `${name} knows every server`);
      assert.deepEqual(s.command!.slice(s.command!.indexOf('--metrics-host'), s.command!.indexOf('--metrics-host') + 2), ['--metrics-host', '0.0.0.0'], `${name} serves metrics beyond its container's loopback`);
    }
    const prometheus = parseYaml(read('prometheus/prometheus.yml')) as { scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }> };
    const targets = prometheus.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets)).sort();
    assert.deepEqual(targets, workers.map(([name]) => `${name}:${DEFAULT_METRICS_PORT}`).sort(), 'Prometheus scrapes every worker');
  });

  test('the crawler image copies every product folder', () => {
    const dockerfile = read('Dockerfile');
    for (const folder of ['app', 'cli', 'ops', 'pipeline', 'ports', 'schemas', 'stages', 'testweb']) assert.match(dockerfile, new RegExp(`^COPY ${folder} ${folder}$`, 'm'), folder);
    assert.ok(existsSync(path.join(ROOT, 'package-lock.json')));
  });

  test("the crawler image runs the crawl command itself, so its first line's node flags apply", () => {
    const entrypoint = /^ENTRYPOINT (.*)$/m.exec(read('Dockerfile'))?.[1];
    assert.deepEqual(JSON.parse(entrypoint ?? 'null'), ['/app/dist/cli/main.js']);
  });

  test('promtool accepts the scrape config and the alert rules', () => {
    const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find(existsSync);
    assert.ok(promtool, "promtool not found: run scripts/setup.sh (Debian's prometheus package)");
    execFileSync(promtool, ['check', 'config', path.join(OPS, 'prometheus/prometheus.yml')], { stdio: 'pipe' });
    execFileSync(promtool, ['check', 'rules', path.join(OPS, 'prometheus/alerts.yml')], { stdio: 'pipe' });
  });
});
