import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRange, parseTime } from '../../cli/replay.js';
import { parseAge, parseSize, retentionPolicy } from '../../cli/retention-flags.js';
import { subjectMatches } from '../../topology/index.js';
import { s3SetupStatements } from '../../pipeline/adapters/s3-settings.js';
import { outputPath, partitionDir } from '../../pipeline/adapters/output-layout.js';
import { DEFAULT_RETENTION } from '../../ops/nats/topology.js';
import { mergeSettings } from '../../cli/settings-flags.js';
import { parseSettings } from '../../pipeline/settings.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

describe('crawl replay range flags', () => {
  it('takes ISO times and durations ago', () => {
    assert.equal(parseTime('--since', '2026-11-21T10:00:00Z').toISOString(), '2026-11-21T10:00:00.000Z');
    assert.equal(parseTime('--since', '2h', NOW).toISOString(), '2026-11-21T10:00:00.000Z');
    assert.equal(parseTime('--since', '7d', NOW).toISOString(), '2026-11-14T12:00:00.000Z');
    assert.throws(() => parseTime('--since', 'yesterday'), /--since must be an ISO time .* got "yesterday"/);
  });
  it('--until is a sequence when it is a number, else a time; --since and --from-seq exclude each other', () => {
    assert.deepEqual(parseRange({ fromSeq: 5, until: '90' }), { fromSeq: 5, untilSeq: 90 });
    assert.deepEqual(parseRange({ since: '1h', until: '30m' }, NOW), { since: new Date(NOW - 3_600_000), until: new Date(NOW - 1_800_000) });
    assert.throws(() => parseRange({ since: '1h', fromSeq: 3 }), /--since or --from-seq, not both/);
  });
});

describe('stream retention flags', () => {
  it('parses ages and sizes, and names the flag on bad input', () => {
    assert.equal(parseAge('--stream-max-age', '14d'), 14 * 86_400_000);
    assert.equal(parseAge('--stream-max-age', '0'), 0);
    assert.equal(parseSize('--stream-max-bytes', '50GB'), 50e9);
    assert.equal(parseSize('--stream-max-bytes', '2MiB'), 2 * 1024 * 1024);
    assert.equal(parseSize('--stream-max-bytes', 'unlimited'), -1);
    assert.throws(() => parseAge('--stream-max-age', '2 weeks'), /--stream-max-age must be a duration/);
    assert.throws(() => parseSize('--stream-max-bytes', 'lots'), /--stream-max-bytes must be a size/);
  });
  it('applies per-stream rules over the global ones, and leaves streams no flag names alone', () => {
    const none = retentionPolicy({}, {});
    assert.equal(none('CRAWL_FETCHED'), undefined);
    const p = retentionPolicy({ streamMaxAge: '7d', streamRetention: ['fetched=3d,1GB'] }, {});
    assert.deepEqual(p('CRAWL_FETCHED'), { maxAgeMs: 3 * 86_400_000, maxBytes: 1e9 });
    assert.deepEqual(p('CRAWL_RESULTS'), { maxAgeMs: 7 * 86_400_000, maxBytes: DEFAULT_RETENTION.maxBytes });
    const env = retentionPolicy({}, { CRAWL_STREAM_MAX_BYTES: '10GB' });
    assert.deepEqual(env('CRAWL_HOSTQ'), { maxAgeMs: DEFAULT_RETENTION.maxAgeMs, maxBytes: 10e9 });
    assert.throws(() => retentionPolicy({ streamRetention: ['pages=3d'] }, {}), /unknown stream "pages"/);
    // the large bodies are kept as long as the fetched pages that refer to them: no limits of their own
    assert.throws(() => retentionPolicy({ streamRetention: ['bodies=3d'] }, {}), /CRAWL_BODIES keeps the limits of fetched.*set fetched=/);
    // the host queues wait as long as their hosts make them: a size cap only
    assert.throws(() => retentionPolicy({ streamRetention: ['hostq=3d'] }, {}), /CRAWL_HOSTQ holds the URLs waiting for their host.*no age limit.*hostq=0,50GB/);
    assert.deepEqual(retentionPolicy({ streamRetention: ['hostq=0,2GB'] }, {})('CRAWL_HOSTQ'), { maxAgeMs: 0, maxBytes: 2e9 });
  });
});

describe('the page size cap', () => {
  it('is --max-page-bytes, 5 MiB by default; --max-body-bytes, its former name, still sets it; both at once is refused', () => {
    assert.equal(mergeSettings(null, { resolve: [], include: [], exclude: [] }).maxPageBytes, 5 * 1024 * 1024);
    assert.equal(mergeSettings(null, { resolve: [], include: [], exclude: [], maxPageBytes: 8_000_000 }).maxPageBytes, 8_000_000);
    assert.equal(mergeSettings(null, { resolve: [], include: [], exclude: [], maxBodyBytes: 2_000_000 }).maxPageBytes, 2_000_000);
    assert.throws(() => mergeSettings(null, { resolve: [], include: [], exclude: [], maxBodyBytes: 2_000_000, maxPageBytes: 3_000_000 }), /--max-body-bytes is the old name of --max-page-bytes: give one of them/);
  });
  it('settings a crawl stored under the former name are read under the new one', () => {
    const stored = parseSettings({ crawlId: 'c', maxBodyBytes: 3_000_000 });
    assert.equal(stored.maxPageBytes, 3_000_000);
    assert.ok(!('maxBodyBytes' in stored));
    assert.equal(mergeSettings(stored, { resolve: [], include: [], exclude: [] }).maxPageBytes, 3_000_000, 'a resumed crawl keeps it');
  });
});

describe('replay routing', () => {
  it('matches NATS subject wildcards', () => {
    assert.ok(subjectMatches('crawl.extracted.*', 'crawl.extracted.3'));
    assert.ok(!subjectMatches('crawl.extracted.*', 'crawl.links.3'));
    assert.ok(!subjectMatches('crawl.extracted.*', 'crawl.extracted.3.x'));
    assert.ok(subjectMatches('crawl.dlq.>', 'crawl.dlq.extract'));
    assert.ok(!subjectMatches('crawl.dlq.>', 'crawl.dlq'));
  });
});

describe('output locations', () => {
  it('partition directories for a path and for an s3:// URL', () => {
    assert.equal(partitionDir('/data/out', 'pages', { crawl: 'c1', date: '2026-11-21', version: 2 }), '/data/out/pages/crawl=c1/date=2026-11-21/version=2');
    assert.equal(outputPath('s3://bucket/prefix/', 'pages', '*.parquet'), 's3://bucket/prefix/pages/*.parquet');
    assert.throws(() => partitionDir('/o', 'pages', { crawl: '../x', date: '2026-11-21', version: 0 }), /not a valid partition value/);
  });
  it('S3 settings from the AWS environment, for an S3-compatible endpoint too', () => {
    const st = s3SetupStatements({ AWS_ACCESS_KEY_ID: 'k', AWS_SECRET_ACCESS_KEY: "s'x", AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:9000' });
    assert.deepEqual(st.slice(0, 2), ['SET autoinstall_known_extensions = false', 'LOAD httpfs'], 'nothing is downloaded unless asked');
    assert.deepEqual(s3SetupStatements({}, { install: true }).slice(1, 3), ['INSTALL httpfs', 'LOAD httpfs']);
    assert.equal(
      st.at(-1),
      "CREATE OR REPLACE SECRET crawl_output_s3 (TYPE s3, KEY_ID 'k', SECRET 's''x', REGION 'eu-west-1', ENDPOINT '127.0.0.1:9000', USE_SSL false, URL_STYLE 'path')",
    );
    assert.match(s3SetupStatements({}).at(-1)!, /PROVIDER credential_chain/);
    assert.throws(() => s3SetupStatements({ AWS_ENDPOINT_URL: 'not a url' }), /AWS_ENDPOINT_URL must be a URL/);
  });
});
