import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { embeddedStateDir, resolveOut } from '../../cli/output-location.js';
import { checkMetricsOptions } from '../../cli/metrics-options.js';
import { parseS3Url } from '../../pipeline/adapters/s3-store.js';
import { natsServers } from '../../pipeline/adapters/nats-connection.js';
import { clusterNodeConfig } from '../../ops/nats/cluster-config.js';

describe('where the output goes, and the flags around it', () => {
  it('--out: a local directory, or s3://bucket/prefix where the command takes one', () => {
    assert.equal(resolveOut('out', 'run', true), path.resolve('out'));
    assert.equal(resolveOut('s3://bucket/a/b/', 'run', true), 's3://bucket/a/b');
    assert.equal(resolveOut('s3://bucket', 'sql', true), 's3://bucket');
    assert.throws(() => resolveOut('gs://bucket/x', 'run', true), /--out must be a directory or an s3:\/\/bucket\/prefix URL/);
    assert.throws(() => resolveOut('s3://bucket/x', 'get', false), /crawl get works on a local output directory/);
    assert.throws(() => resolveOut('s3://B_/x', 'run', true), /not an S3 URL/);
  });

  it('the embedded store of an s3:// output lives under ./crawl-state', () => {
    assert.equal(embeddedStateDir('/data/out'), '/data/out/nats');
    assert.equal(embeddedStateDir('s3://bucket/a/b'), path.resolve('crawl-state', 'bucket', 'a', 'b', 'nats'));
    assert.deepEqual(parseS3Url('s3://my.bucket/x/y/'), { bucket: 'my.bucket', prefix: 'x/y' });
  });

  it('NATS_URL lists one server or several', () => {
    assert.deepEqual(natsServers('nats://a:4222'), ['nats://a:4222']);
    assert.deepEqual(natsServers('nats://a:4222, nats://b:4222,'), ['nats://a:4222', 'nats://b:4222']);
  });

  it('--metrics-host takes an address, not a name or a URL', () => {
    for (const ok of ['127.0.0.1', '0.0.0.0', '::1', '::', 'localhost']) checkMetricsOptions({ metricsHost: ok });
    for (const bad of ['example.org', 'http://0.0.0.0', '']) assert.throws(() => checkMetricsOptions({ metricsHost: bad }), /--metrics-host must be an IP address/);
  });

  it('a cluster server config names itself, its routes and its store', () => {
    const conf = clusterNodeConfig({ name: 'n2', listen: '127.0.0.1:4001', clusterListen: '127.0.0.1:5001', routes: ['nats-route://127.0.0.1:5000', 'nats-route://127.0.0.1:5001'], storeDir: '/s/n2' });
    assert.match(conf, /^server_name: n2$/m);
    assert.match(conf, /^listen: "127.0.0.1:4001"$/m);
    assert.match(conf, /cluster \{\n  name: crawl\n  listen: "127.0.0.1:5001"\n  routes: \[\n    "nats-route:\/\/127.0.0.1:5000"\n    "nats-route:\/\/127.0.0.1:5001"\n  \]\n\}/);
    assert.match(conf, /store_dir: "\/s\/n2"/);
    assert.doesNotMatch(conf, /^http:/m, 'no monitoring port unless asked');
  });
});
