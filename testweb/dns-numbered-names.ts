// Thousands of host names answered by pattern, for DNS at breadth: `h<N>.<zone>` (N from 0)
// resolves to an address of 127.0.0.0/8 derived from N, with one TTL; every `nxdomainEvery`-th
// name does not exist and every `servfailEvery`-th gets SERVFAIL, so a test knows each name's
// answer without a table:
//
//   const names = numberedNames({ zone: 'broad.test', ttl: 300, nxdomainEvery: 10 });
//   const dns = await startTestDns({}, { fallback: names.answer, zones: { 'broad.test': { minimum: 60 } } });
//   names.host(7)        // 'h7.broad.test'
//   names.expected(7)    // { a: ['127.0.0.8'], ttl: 300 }
//
// The addresses are data: nothing here listens on them.

import type { DnsEntry } from './dns-server.js';

export interface NumberedNamesOptions {
  zone: string;
  ttl: number;
  /** every n-th name (N % n === n - 1) answers NXDOMAIN; 0: none */
  nxdomainEvery?: number;
  /** every n-th name (N % n === n - 1, unless NXDOMAIN) answers SERVFAIL; 0: none */
  servfailEvery?: number;
}

export interface NumberedNames {
  host(n: number): string;
  /** The answer the server gives for name N. */
  expected(n: number): DnsEntry;
  /** The server's fallback: the answer for a name of the pattern, undefined for any other. */
  answer(name: string): DnsEntry | undefined;
}

/** 127.x.y.z for N: N + 1 spread over the three low bytes (127.0.0.0 itself is skipped). */
export function numberedAddress(n: number): string {
  const v = n + 1;
  if (!Number.isInteger(n) || n < 0 || v > 0xffffff) throw new Error(`testdns: no 127.0.0.0/8 address for name number ${n}`);
  return `127.${(v >> 16) & 255}.${(v >> 8) & 255}.${v & 255}`;
}

export function numberedNames(opts: NumberedNamesOptions): NumberedNames {
  const zone = opts.zone.toLowerCase().replace(/\.$/, '');
  const pattern = new RegExp(`^h(0|[1-9][0-9]{0,7})\\.${zone.replaceAll('.', '\\.')}$`);
  const hits = (n: number, every = 0) => every > 0 && n % every === every - 1;
  const expected = (n: number): DnsEntry => {
    if (hits(n, opts.nxdomainEvery)) return 'nxdomain';
    if (hits(n, opts.servfailEvery)) return 'servfail';
    return { a: [numberedAddress(n)], ttl: opts.ttl };
  };
  return {
    host: (n) => `h${n}.${zone}`,
    expected,
    answer: (name) => {
      const m = pattern.exec(name);
      return m ? expected(Number(m[1])) : undefined;
    },
  };
}
