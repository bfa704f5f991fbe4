// `crawl testweb`: runs the test web in the foreground until SIGINT/SIGTERM, so a crawler in
// another process (or a person with curl --resolve) can use it.

import { pathToFileURL } from 'node:url';
import { startTestWeb } from './server.js';
import { startForwardProxy } from './forward-proxy.js';

export interface TestWebCliArgs {
  hosts: number;
  port: number;
  seed: number;
  benchHosts?: number;
  /** also serve the politeness hosts (*.polite.test, *.sharedip.test on 127.0.0.2) */
  politeness?: boolean;
  /** also serve hostile.test */
  hostile?: boolean;
  /** also serve the crawl-trap hosts (*.trap.test) */
  traps?: boolean;
  /** also serve the hosts whose pages need a browser (*.render.test) */
  render?: boolean;
  /** also serve the hosts whose pages change on a schedule (*.fresh.test), the schedule starting now */
  fresh?: boolean;
  /** also serve the host of robots directives (www.directives.test) */
  directives?: boolean;
  /** also serve the worked examples' hosts (*.examples.test) */
  examples?: boolean;
  /** also serve *.net.test: a host on [::1] only, one whose first address never answers */
  network?: boolean;
  /** also run a forward proxy (CONNECT and forwarding) on another port, and print it */
  proxy?: boolean;
  /** also serve the sitemap-only site (*.sitemaponly.test) */
  sitemapHosts?: boolean;
  /** also serve the ID-routed shop and forum (*.ids.test) */
  idRouted?: boolean;
  /** also serve the failing hosts (failing.test, dead.failing.test) */
  failing?: boolean;
  /** also serve big.test (pages of 5 and 6 MiB) */
  bigPages?: boolean;
  scopeHosts?: boolean;
  /** also answer HTTPS (HTTP/2 offered first) on the same port, with a CA made at start and the bad-certificate hosts */
  tls?: boolean;
  /** also serve the broad web: this many registrable domains d00000.test ... on loopback addresses 127.77.x.y, with its DNS server (0 = off) */
  broadDomains?: number;
  /** Where the status line goes; default stdout. */
  out?: (line: string) => void;
  /** Stops the server when aborted, like a signal (for tests). */
  signal?: AbortSignal;
}

function range(names: string[]): string {
  return names.length === 0 ? '' : names.length === 1 ? `: ${names[0]}` : `: ${names[0]} .. ${names[names.length - 1]}`;
}

/** Starts the test web, prints one status line, and resolves once stopped by SIGINT/SIGTERM. */
export async function runTestWebCli(args: TestWebCliArgs): Promise<void> {
  const web = await startTestWeb({
    hosts: args.hosts,
    port: args.port,
    seed: args.seed,
    benchHosts: args.benchHosts ?? 0,
    ...(args.politeness ? { politeness: true } : {}),
    ...(args.hostile ? { hostile: true } : {}),
    ...(args.traps ? { traps: true } : {}),
    ...(args.render ? { render: true } : {}),
    ...(args.fresh ? { fresh: true } : {}),
    ...(args.directives ? { directives: true } : {}),
    ...(args.examples ? { examples: true } : {}),
    ...(args.network ? { network: true } : {}),
    ...(args.sitemapHosts ? { sitemapHosts: true } : {}),
    ...(args.idRouted ? { idRouted: true } : {}),
    ...(args.failing ? { failing: true } : {}),
    ...(args.bigPages ? { bigPages: true } : {}),
    ...(args.scopeHosts ? { scopeHosts: true } : {}),
    ...(args.tls ? { tls: true } : {}),
    ...(args.broadDomains ? { broad: { domains: args.broadDomains } } : {}),
  });
  const proxy = args.proxy ? await startForwardProxy() : null;
  const { siteHostNames, benchHostNames } = web.model;
  let summary = `${siteHostNames.length} hosts${range(siteHostNames)}`;
  if (benchHostNames.length > 0) summary += `, ${benchHostNames.length} bench hosts${range(benchHostNames)}`;
  if (web.politeness) summary += `, ${web.politeness.hostNames.length} politeness hosts`;
  if (web.hostile) summary += ', hostile.test';
  if (web.traps) summary += `, ${web.traps.hostNames.length} trap hosts (*.trap.test)`;
  if (web.render) summary += `, ${web.render.hostNames.length} render hosts (*.render.test)`;
  if (web.network) summary += `, ${web.network.hostNames.length} network hosts (*.net.test: [::1], a silent first address)`;
  if (web.failing) summary += ', failing.test and dead.failing.test';
  if (web.fresh) summary += `, ${web.fresh.hostNames.length} fresh hosts (*.fresh.test, changing since ${new Date(web.fresh.options.startAt).toISOString()})`;
  if (web.sitemapHosts) summary += `, ${web.sitemapHosts.hostNames.length} sitemap-only hosts (*.sitemaponly.test)`;
  if (web.directives) summary += `, ${web.directives.hostNames.join(', ')}`;
  if (web.examples) summary += `, ${web.examples.hostNames.join(', ')}`;
  if (web.idRouted) summary += `, ${web.idRouted.hostNames.length} ID-routed hosts (*.ids.test: ${web.idRouted.options.products} products, ${web.idRouted.options.topics} topics)`;
  if (web.bigPages) summary += ', big.test (pages of 5 and 6 MiB)';
  if (web.scopeHosts) summary += ', the scope hosts (moved-seed.test, *.scope-home.test, www.scope-away.test)';
  if (web.broad) summary += `, ${web.broad.options.domains} broad domains (d….test on ${web.broad.options.addresses} addresses 127.77.x.y, seed ${web.broad.seedUrl()})`;
  if (web.tls) summary += `; HTTPS too (HTTP/1.1 only: ${web.tls.http1OnlyPatterns.join(', ')}), bad certificates at *.badtls.test`;
  const out = args.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  out(`testweb listening on 127.0.0.1:${web.port} (${summary})`);
  if (proxy) out(`forward proxy on ${proxy.url} (crawl with --proxy ${proxy.url})`);
  const trust = web.tls ? ` --ca-file ${web.tls.caFile}` : '';
  if (args.politeness || args.hostile || args.traps || args.render || args.fresh || args.directives || args.examples || args.network || args.sitemapHosts || args.idRouted || args.failing || args.bigPages || args.scopeHosts || args.tls) out(`crawl with: ${web.resolveRules.map((r) => `--resolve ${r}`).join(' ')}${trust}`);
  if (web.broad) out(`crawl the broad web with: ${web.broad.crawlArgs().join(' ')} --seed ${web.broad.seedUrl()}`);
  if (web.tls) out(`trust its CA: --ca-file ${web.tls.caFile} (or NODE_EXTRA_CA_CERTS=${web.tls.caFile}; curl --cacert ${web.tls.caFile})`);

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      args.signal?.removeEventListener('abort', stop);
      void Promise.all([web.close(), proxy?.close()]).then(() => resolve());
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (args.signal?.aborted) stop();
    else args.signal?.addEventListener('abort', stop, { once: true });
  });
}

// Direct use without the CLI: node dist/testweb/main.js [--hosts N] [--port P] [--seed S] [--bench-hosts M] [--fresh] [--tls]
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const flag = (name: string, fallback: number): number => {
    const i = process.argv.indexOf(`--${name}`);
    const value = i < 0 ? fallback : Number(process.argv[i + 1]);
    if (!Number.isInteger(value) || value < 0) {
      process.stderr.write(`testweb: --${name} must be a non-negative integer\n`);
      process.exit(2);
    }
    return value;
  };
  void runTestWebCli({ hosts: flag('hosts', 20), port: flag('port', 0), seed: flag('seed', 1), benchHosts: flag('bench-hosts', 0), fresh: process.argv.includes('--fresh'), tls: process.argv.includes('--tls') });
}
