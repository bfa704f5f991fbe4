/**
 * The forward proxy, as a crawl is told about it: `--proxy URL` (http:// and https:// URLs
 * alike), else the environment's convention as curl reads it: `https_proxy`/`HTTPS_PROXY` for
 * https:// URLs, `http_proxy`/`HTTP_PROXY` for http:// ones (lowercase first); the hosts that
 * bypass it from `--noproxy LIST`, else `no_proxy`/`NO_PROXY`. What is found becomes the
 * crawl's settings (stored, and used by every `crawl worker`), without any credentials.
 *
 * Credentials never travel in settings (they are stored in the crawl-config bucket and shown
 * by status and logs), nor in a flag's value (a command line shows in `ps`): each process
 * reads them from `--proxy-credentials-file FILE` (one line, `user:password`) or from the
 * userinfo of the environment's proxy URL naming the same proxy.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parseProxyUrl, proxyOrigin, redactedProxy, splitNoProxy, type ProxyCredentials } from '../pipeline/adapters/http/proxy-config.js';
import type { CrawlSettings, CrawlSettingsInput } from '../pipeline/settings.js';
import { UsageError } from './usage-error.js';

export interface ProxyFlags {
  proxy?: string;
  noproxy?: string[];
}

const HTTPS_VARS = ['https_proxy', 'HTTPS_PROXY'] as const;
const HTTP_VARS = ['http_proxy', 'HTTP_PROXY'] as const;
const NO_PROXY_VARS = ['no_proxy', 'NO_PROXY'] as const;

const envValue = (env: NodeJS.ProcessEnv, names: readonly string[]): { name: string; value: string } | null => {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return null;
};

function checked(raw: string, what: string): { origin: string; hasCredentials: boolean } {
  try {
    const { url, credentials } = parseProxyUrl(raw, what);
    return { origin: proxyOrigin(url), hasCredentials: credentials !== null };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The proxy settings these flags and this environment give (only the ones they set: the rest stay as stored). */
export function proxySettingsFrom(o: ProxyFlags, env: NodeJS.ProcessEnv): Partial<Pick<CrawlSettingsInput, 'httpProxy' | 'httpsProxy' | 'noProxy'>> {
  const out: Partial<Pick<CrawlSettingsInput, 'httpProxy' | 'httpsProxy' | 'noProxy'>> = {};
  if (o.proxy !== undefined) {
    const p = checked(o.proxy, '--proxy');
    if (p.hasCredentials) {
      throw new UsageError(`invalid --proxy ${JSON.stringify(redactedProxy(o.proxy))}: credentials in a flag's value show in \`ps\`; put user:password in --proxy-credentials-file FILE, or the whole URL in HTTPS_PROXY / HTTP_PROXY`);
    }
    out.httpProxy = p.origin;
    out.httpsProxy = p.origin;
  } else {
    const https = envValue(env, HTTPS_VARS);
    const http = envValue(env, HTTP_VARS);
    if (https) out.httpsProxy = checked(https.value, https.name).origin;
    if (http) out.httpProxy = checked(http.value, http.name).origin;
  }
  if (o.noproxy && o.noproxy.length > 0) out.noProxy = o.noproxy.flatMap(splitNoProxy);
  else {
    const no = envValue(env, NO_PROXY_VARS);
    if (no) out.noProxy = splitNoProxy(no.value);
  }
  return out;
}

/**
 * This process's Proxy-Authorization credentials for the crawl's proxies, by proxy origin: the
 * file's for every proxy, else the userinfo of an environment proxy URL naming that proxy.
 * Nothing of a credential goes into an error message.
 */
export function proxyCredentialsFor(settings: Pick<CrawlSettings, 'httpProxy' | 'httpsProxy'>, file: string | undefined, env: NodeJS.ProcessEnv): Map<string, ProxyCredentials> {
  const out = new Map<string, ProxyCredentials>();
  const proxies = [...new Set([settings.httpProxy, settings.httpsProxy].filter((p): p is string => p !== null))];
  if (file !== undefined && proxies.length === 0) throw new UsageError('--proxy-credentials-file is given but the crawl uses no proxy (--proxy, HTTPS_PROXY, HTTP_PROXY)');
  const fromFile = file !== undefined ? readCredentialsFile(file) : null;
  for (const stored of proxies) {
    const origin = proxyOrigin(parseProxyUrl(stored, 'proxy').url);
    if (fromFile) {
      out.set(origin, fromFile);
      continue;
    }
    for (const name of [...HTTPS_VARS, ...HTTP_VARS]) {
      const value = env[name]?.trim();
      if (!value) continue;
      try {
        const { url, credentials } = parseProxyUrl(value, name);
        if (credentials && proxyOrigin(url) === origin) {
          out.set(origin, credentials);
          break;
        }
      } catch {
        /* a malformed variable was reported when the settings were made */
      }
    }
  }
  return out;
}

function readCredentialsFile(file: string): ProxyCredentials {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --proxy-credentials-file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  const colon = line.indexOf(':');
  if (colon <= 0) throw new UsageError(`--proxy-credentials-file ${file}: expected one line USER:PASSWORD`);
  return { user: line.slice(0, colon), password: line.slice(colon + 1) };
}

/** `--proxy-credentials-file`: for every command that runs stages (run, serve, worker). */
export function addProxyProcessOptions(cmd: Command): Command {
  return cmd.option('--proxy-credentials-file <file>', "the forward proxy's credentials, one line USER:PASSWORD (else those in HTTPS_PROXY / HTTP_PROXY); read by this process, never stored");
}
