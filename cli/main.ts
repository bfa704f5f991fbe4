#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --single-threaded-gc --max-semi-space-size=8 --heap-growing-percent=70
import { Command, CommanderError, Option } from 'commander';
import { UsageError, collect, parseIntOption } from './usage-error.js';
import { LOG_LEVELS } from '../pipeline/logger.js';
import { addSettingsOptions } from './settings-flags.js';
import { addProxyProcessOptions } from './proxy-options.js';
import { addRetentionOptions } from './retention-flags.js';
import { addRobotsCheckCommand } from './robots-check.js';
import { addDeadLettersCommand } from './dead-letters.js';
import { endQuietlyOnClosedPipe, exitWhenDrained } from './exit.js';
import { addNatsOptions, natsSecurityFrom, useNatsSecurity, type NatsFlags } from './nats-options.js';
import { addMetricsOptions } from './metrics-options.js';
import { MAX_REPLICAS } from '../ops/nats/topology.js';
import { addClusterCommand } from './cluster.js';

const DEFAULT_OUT = 'crawl-output';
// Each command's module is imported when the command runs (`await import('./run.js')`): the
// stages, NATS and DuckDB are loaded only by the commands that use them, so `crawl sql`,
// `crawl get`, `--help` and a usage error start in about half the time.

/** --log-level and --log-file, for the commands that run stages */
function addLogOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--log-level <level>', 'log records at this level and above (default info; on a terminal only warnings are shown unless this is given)').choices(LOG_LEVELS))
    .option('--log-file <file>', 'also append every log record at the level to this file, as JSON lines');
}
const MAX_EXTRACT_THREADS = 256;
const EXTRACT_THREADS_HELP = 'worker threads that parse pages for the extract stage (default: CPU cores - 1, at least 1; 0 = on the main thread)';

/** --render-concurrency and --render-memory-mb: the render stage's browser in this process */
function addRenderProcessOptions(cmd: Command): Command {
  return cmd
    .option('--render-concurrency <n>', 'pages the render stage renders at once in this process: browser contexts (default 2)', parseIntOption('--render-concurrency', 1, 64))
    .option('--render-memory-mb <n>', "JavaScript heap a rendered page may use; past it the page's renderer dies and the render fails (default 512)", parseIntOption('--render-memory-mb', 16, 16_384));
}

function program(): Command {
  const cli = new Command('crawl')
    .description('A polite, durable web crawler built as a NATS JetStream dataflow')
    .exitOverride()
    .showHelpAfterError(false)
    // one line per error, suggestion included: "crawl: error: unknown option '--sed' (Did you mean --seed?)"
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      outputError: (s, write) => write(`crawl: ${s.trim().replace(/\s*\n\s*/g, ' ')}\n`),
    });

  addProxyProcessOptions(addRenderProcessOptions(addMetricsOptions(addLogOptions(addRetentionOptions(addSettingsOptions(cli.command('run')))))))
    .description('crawl from seeds with every stage in this process (starts nats-server unless NATS_URL is set); resumes a crawl in the same --out')
    .option('--seed <url>', 'a seed URL (repeatable)', collect, [])
    .option('--seeds-file <file>', 'a file of seed URLs, one a line (# comments)')
    .option('--out <dir>', 'output directory (Parquet tables, and the JetStream store when embedded)', DEFAULT_OUT)
    .option('--until-idle', 'exit 0 once every accepted URL has a terminal outcome and the output is flushed', false)
    .option('--no-compact', 'with --until-idle: do not merge the small output files at the end')
    .option('--extract-threads <n>', EXTRACT_THREADS_HELP, parseIntOption('--extract-threads', 0, MAX_EXTRACT_THREADS))
    .option('--stage-threads <n>', 'threads the stages run on: 1 = all on the main thread; 2 = the stages that handle fetched pages (extract, simhash, archive, persist) on a second one (default 1)', parseIntOption('--stage-threads', 1, 2))
    .option('--stage-module <file>', 'also run the stage this module exports (defineStage from jetstream-crawler) in this process (repeatable; docs/extending.md)', collect, [])
    .addOption(new Option('--no-titles', 'test aid: extract keeps no page titles (a deliberate bug for the replay test)').hideHelp())
    .action(async (o) => exitWhenDrained(await (await import('./run.js')).runCrawl(o)));

  cli
    .command('seed')
    .description('publish seed URLs (arguments, or one per line on stdin) to a running crawl')
    .argument('[urls...]')
    .option('--out <dir>', 'the running crawl’s output directory (when it runs an embedded server)', DEFAULT_OUT)
    .action(async (urls: string[], o) => exitWhenDrained(await (await import('./seed.js')).seedCrawl(urls, o)));

  addProxyProcessOptions(addRenderProcessOptions(addMetricsOptions(addLogOptions(cli.command('worker')))))
    .description('run one stage of a running crawl in this process (start as many as you like)')
    .option('--stage <name>', 'normalize | seen-filter | politeness-gate | fetch | render | extract | simhash | persist | archive')
    .option('--stage-module <file>', "run the stage this module exports, on its own consumer (repeatable; with or without --stage)", collect, [])
    .option('--concurrency <n>', 'messages handled at once by this process', parseIntOption('--concurrency', 1, 100_000))
    .option('--extract-threads <n>', EXTRACT_THREADS_HELP, parseIntOption('--extract-threads', 0, MAX_EXTRACT_THREADS))
    .option('--out <dir>', 'output directory (persist and archive write here; also where an embedded server is found)', DEFAULT_OUT)
    .action(async (o) => exitWhenDrained(await (await import('./worker.js')).runWorker(o)));

  cli
    .command('sql')
    .description('query the crawl output with DuckDB: views pages, links, fetch_log, hosts, <table>_all (a prompt without SQL)')
    .argument('[sql]')
    .option('--out <dir>', 'output directory, or s3://bucket/prefix (read through DuckDB httpfs, AWS_* environment)', DEFAULT_OUT)
    .addOption(new Option('--format <format>', 'table | csv | json | parquet (with --output FILE)').default('table'))
    .option('--output <file>', 'with --format parquet: the Parquet file to write the result to')
    .option('--version <n>', 'show the output as of this version (0 = the crawl, n = its n-th replay); default: the newest', parseIntOption('--version', 0))
    .option('--install-httpfs', "with --out s3://…: first download DuckDB's httpfs extension (once per machine) from DuckDB's extension repository", false)
    .action(async (sql: string | undefined, o) => exitWhenDrained(await (await import('./sql.js')).runSql(sql, o)));

  cli
    .command('report')
    .description('one self-contained HTML file of charts about the crawl output: pages/s, outcomes, errors by reason and host, domains covered, bytes, status classes')
    .option('--out <dir>', 'output directory, or s3://bucket/prefix (read through DuckDB httpfs, as crawl sql)', DEFAULT_OUT)
    .option('--file <path>', 'the HTML file to write (default: report.html in --out; needed with an s3:// --out)')
    .option('--crawl-id <id>', 'only this crawl id (default: every crawl in the output)')
    .option('--install-httpfs', "with --out s3://…: first download DuckDB's httpfs extension, as crawl sql", false)
    .action(async (o) => exitWhenDrained(await (await import('./report.js')).runReport(o)));

  cli
    .command('compact')
    .description('merge the small Parquet files of each output partition into bigger ones (crash-safe; safe beside running writers)')
    .option('--out <dir>', 'output directory', DEFAULT_OUT)
    .option('--min-age-ms <n>', 'leave files younger than this for a later run (default 60000)', parseIntOption('--min-age-ms', 0))
    .option('--target-mb <n>', 'merged files grow up to this many MiB (default 128)', parseIntOption('--target-mb', 1, 100_000))
    .option('--memory-mb <n>', "DuckDB's memory limit for the merge; one merge takes in at most a sixth of it, uncompressed (default 512)", parseIntOption('--memory-mb', 64, 1_000_000))
    .action(async (o) => exitWhenDrained(await (await import('./compact.js')).runCompact(o)));

  addLogOptions(cli.command('replay'))
    .description('re-run a stage and everything downstream over the retained messages into a new output version (nothing is fetched)')
    .option('--from <stage>', 'extract | simhash | persist')
    .option('--stage-module <file>', "instead of --from: re-run this module's stage over its input's retained messages into a new version of its table", collect, [])
    .option('--since <time>', 'start at messages stored at or after this time: ISO 8601, or a duration ago (30m, 2h, 7d)')
    .option('--from-seq <n>', "start at this sequence of the stage's input stream", parseIntOption('--from-seq', 1))
    .option('--until <time|seq>', 'stop after this time or stream sequence (default: the newest message when the replay starts)')
    .option('--out <dir>', 'output directory of the crawl (the new version is written there)', DEFAULT_OUT)
    .option('--crawl-id <id>', "crawl id for replayed rows whose fetch is not in the output yet (default: the crawl's stored settings)")
    .action(async (o) => exitWhenDrained(await (await import('./replay.js')).runReplayCommand(o)));

  cli
    .command('streams')
    .description("each stream's messages and bytes, per fetched page and per million pages: the disk its retention costs")
    .option('--out <dir>', 'the crawl’s output directory (when it uses an embedded server)', DEFAULT_OUT)
    .addOption(new Option('--format <format>', 'table | json').default('table'))
    .action(async (o) => exitWhenDrained(await (await import('./streams.js')).runStreams(o)));

  cli
    .command('get')
    .description("print the stored WARC record of a URL's latest response (else latest capture), or of a fetch, read from its WARC file by offset and length")
    .argument('[url]')
    .option('--fetch-id <id>', 'the capture of this fetch (its last attempt) instead of a URL')
    .option('--payload', 'print the HTTP body only (with --rendered: the DOM)', false)
    .option('--rendered', 'the DOM the render stage made of the page (its conversion record) instead of the response', false)
    .option('--out <dir>', 'output directory', DEFAULT_OUT)
    .action(async (url: string | undefined, o) => exitWhenDrained(await (await import('./get.js')).runGet(url, o)));

  cli
    .command('index')
    .description('rebuild the CDXJ index (warc/<name>.cdxj, as pywb reads it) of every sealed WARC file of the output from the file itself')
    .option('--out <dir>', 'output directory', DEFAULT_OUT)
    .option('--missing', 'only the files that have no index yet', false)
    .action(async (o) => exitWhenDrained(await (await import('./index-command.js')).runIndex(o)));

  cli
    .command('export')
    .description('package the crawl for other tools: wacz (WARC files, CDXJ index and page list, for ReplayWeb.page and pywb), wet (extracted text) or wat (metadata and links), as Common Crawl writes them')
    .argument('<format>', 'wacz | wet | wat')
    .option('--out <dir>', 'output directory of the crawl', DEFAULT_OUT)
    .option('--to <file>', 'the file to write (.wacz, .warc.wet.gz, .warc.wat.gz)')
    .option('--host <host>', 'only the pages and records of this host')
    .action(async (format: string, o) => exitWhenDrained(await (await import('./export.js')).runExport(format, o)));

  cli
    .command('testweb')
    .description('serve the built-in deterministic test web on 127.0.0.1')
    .option('--hosts <n>', 'number of site hosts', parseIntOption('--hosts', 1, 999), 20)
    .option('--port <p>', 'port (0 = any free port)', parseIntOption('--port', 0, 65535), 0)
    .option('--seed <n>', 'generator seed', parseIntOption('--seed', 0), 1)
    .option('--bench-hosts <n>', 'extra allow-all hosts for benchmarks', parseIntOption('--bench-hosts', 0, 10_000), 0)
    .option('--politeness', 'also serve the politeness hosts (*.polite.test; *.sharedip.test on 127.0.0.2)', false)
    .option('--hostile', 'also serve hostile.test: bombs, endless bodies, redirect loops, lying headers', false)
    .option('--traps', 'also serve the crawl-trap hosts (*.trap.test): infinite calendar, session ids, endless pagination, ever-deeper links, soft 404s', false)
    .option('--render-hosts', 'also serve the hosts whose pages need a browser (*.render.test): an app built by JavaScript, a page reaching for loopback, a page that never settles', false)
    .option('--fresh', 'also serve hosts whose pages change on a schedule (*.fresh.test): validators, 304s, sitemaps', false)
    .option('--directives', 'also serve www.directives.test: pages that say noindex and nofollow by X-Robots-Tag and meta tags named for a crawler', false)
    .option('--examples', 'also serve the worked examples\' hosts: shop.examples.test (products in JSON-LD and microdata) and topics.examples.test (pages on topics, for a focused crawl)', false)
    .option('--network', 'also serve *.net.test: a host on [::1] only, one whose first address never answers, a video', false)
    .option('--proxy', 'also run a forward proxy (CONNECT tunnels and forwarding) on another loopback port', false)
    .option('--sitemap-hosts', 'also serve a site whose pages are linked only from its sitemaps (*.sitemaponly.test)', false)
    .option('--id-routed', 'also serve an ID-routed shop and forum (*.ids.test): thousands of distinct pages under one URL pattern each', false)
    .option('--failing', 'also serve failing.test (endpoints that hang, drip, reset and time out beside working pages) and dead.failing.test (dead after its robots.txt)', false)
    .option('--big-pages', 'also serve big.test: HTML pages of 5 and 6 MiB of text', false)
    .option('--scope-hosts', 'also serve small sites on different registrable domains that link to each other, and moved-seed.test, which redirects to one of them', false)
    .option('--broad <domains>', 'also serve the broad web: this many registrable domains d00000.test ... with 5 pages each, cross-linked, on 128 loopback addresses 127.77.x.y, named by a DNS server it starts (its address is printed)', parseIntOption('--broad', 1, 10_000_000))
    .option('--tls', 'also answer HTTPS on the same port, HTTP/2 offered first, signed by a CA made at start (its PEM file is printed), with bad-certificate hosts (*.badtls.test)', false)
    .action(async (o) => {
      const { runTestWebCli } = await import('../testweb/main.js');
      await runTestWebCli({ hosts: o.hosts, port: o.port, seed: o.seed, benchHosts: o.benchHosts, politeness: o.politeness, hostile: o.hostile, traps: o.traps, render: o.renderHosts, fresh: o.fresh, directives: o.directives, examples: o.examples, network: o.network, proxy: o.proxy, sitemapHosts: o.sitemapHosts, idRouted: o.idRouted, failing: o.failing, bigPages: o.bigPages, scopeHosts: o.scopeHosts, tls: o.tls, broadDomains: o.broad });
    });

  addProxyProcessOptions(addRenderProcessOptions(addMetricsOptions(addLogOptions(addRetentionOptions(addSettingsOptions(cli.command('serve')))))))
    .description('the crawl-jobs service: an HTTP API and NATS request subjects to create, list, pause, resume and cancel jobs; runs jobs on their schedules and hands out due revisits (runs every stage too unless --stages none)')
    .option('--out <dir>', 'output directory (Parquet tables, and the JetStream store when embedded)', DEFAULT_OUT)
    .option('--host <address>', 'address the HTTP API listens on; other than loopback it needs an API token', '127.0.0.1')
    .option('--api-token-file <file>', 'file holding the token every HTTP request must carry as "Authorization: Bearer <token>" (env CRAWL_API_TOKEN)')
    .option('--port <p>', 'HTTP port (0 = any free port; the chosen URL is printed)', parseIntOption('--port', 0, 65535), 8080)
    .option('--stages <which>', 'all: run every stage in this process; none: the API and scheduler only', 'all')
    .option('--extract-threads <n>', EXTRACT_THREADS_HELP, parseIntOption('--extract-threads', 0, MAX_EXTRACT_THREADS))
    .action(async (o) => exitWhenDrained(await (await import('./serve.js')).runServe(o)));

  cli
    .command('status')
    .description('what a crawl has done and what it waits for: outcomes so far, queued URLs per stage and host, hosts waiting and why, until when')
    .option('--out <dir>', 'the crawl’s output directory (its embedded server, and the outcomes persisted so far)', DEFAULT_OUT)
    .addOption(new Option('--format <format>', 'table | json').default('table'))
    .action(async (o) => exitWhenDrained(await (await import('./status.js')).runStatus(o)));

  addRobotsCheckCommand(cli);
  addClusterCommand(cli);
  addDeadLettersCommand(cli, DEFAULT_OUT);

  const topology = cli.command('topology').description('streams, consumers and KV buckets');
  addRetentionOptions(addSettingsOptions(topology.command('apply')))
    .description('apply the topology to NATS_URL idempotently and store the crawl settings for workers')
    .option('--replicas <n>', 'copies of every stream, consumer and KV bucket (a cluster of at least n servers; default: keep what exists, 1 for new ones)', parseIntOption('--replicas', 1, MAX_REPLICAS))
    .action(async (o) => exitWhenDrained(await (await import('./topology-command.js')).applyTopologyCommand(o)));

  // every command that connects to NATS takes the credentials and TLS options
  const connecting = ['run', 'seed', 'worker', 'replay', 'streams', 'serve', 'status', 'dead-letters'].map((name) => cli.commands.find((c) => c.name() === name)!);
  for (const cmd of [...connecting, topology.commands.find((c) => c.name() === 'apply')!]) addNatsOptions(cmd);
  cli.hook('preAction', (_cli, action) => useNatsSecurity(natsSecurityFrom(action.opts() as NatsFlags)));
  return cli;
}

async function main(argv: string[]): Promise<void> {
  endQuietlyOnClosedPipe();
  try {
    await program().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) await exitWhenDrained(0);
      // commander already printed its one-line message
      await exitWhenDrained(2);
    }
    // a server that cannot carry the crawler's messages is set up wrong, like a bad argument
    // a stage module that cannot be loaded is a bad argument too, said before anything is crawled
    if (err instanceof UsageError || ['UsageError', 'MaxPayloadError', 'StageModuleError', 'StageDefinitionError'].includes((err as Error)?.name)) {
      process.stderr.write(`crawl: ${(err as Error).message}\n`);
      await exitWhenDrained(2);
    }
    process.stderr.write(`crawl: ${(err as Error)?.stack ?? String(err)}\n`);
    await exitWhenDrained(1);
  }
}

void main(process.argv);
