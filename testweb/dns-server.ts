// A tiny authoritative DNS server for tests: UDP on 127.0.0.1 (a free port), answering A and
// AAAA queries from a mutable map, so the crawler's resolver, DNS cache (TTLs), SSRF guard and
// DNS-rebinding defences can be tested against answers the test controls:
//
//   const dns = await startTestDns({ 'a.example.test': { a: ['127.0.0.1'], ttl: 30 } });
//   resolver.setServers([`${dns.address}:${dns.port}`]);
//   dns.set('a.example.test', { a: ['10.0.0.5'], ttl: 0 });   // the next answer differs
//
// Answers are data only: an answer may name any address (10.0.0.5, 169.254.169.254), and
// nothing here connects to it. Per name: A/AAAA answers (one RR per address, each with the
// entry's TTL), 'nxdomain' (RCODE 3) or 'servfail' (RCODE 2). Unknown names get NXDOMAIN; other
// query types for a known name an empty NOERROR (as does A or AAAA when that list is empty).
// No CNAMEs, no TCP, no EDNS in answers (answers are small, so never truncated).
//
// At breadth: a `fallback` answers names the map does not hold (e.g. thousands of names by
// pattern, testweb/dns-numbered-names.ts); `zones` makes names zone apexes with an SOA (its
// MINIMUM is what RFC 2308 caches negative answers for): SOA queries at the apex are answered,
// and NXDOMAIN / NODATA answers under it carry the SOA in their authority section; `delayMs`
// holds each answer back, so a test can see how many queries a client has out at once
// (`peakOutstanding`).
// Wire format per RFC 1035 (answers point at the question's name with a compression pointer).

import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';

export interface DnsAnswers {
  /** IPv4 addresses for A queries. */
  a?: string[];
  /** IPv6 addresses for AAAA queries. */
  aaaa?: string[];
  /** TTL (seconds) of every answer RR of this name. */
  ttl: number;
}

export type DnsEntry = DnsAnswers | 'nxdomain' | 'servfail';

export interface DnsQueryRecord {
  /** Query name, lower-case, without the trailing dot. */
  name: string;
  /** 'A', 'AAAA', or another type's mnemonic ('MX', 'TXT', ...) or 'TYPE<n>'. */
  type: string;
  /** Epoch ms when the query arrived. */
  at: number;
  /** The query's ID: a client resending a query it got no answer to (a lost packet) sends the same one. */
  id: number;
}

export interface TestDnsOptions {
  /** Answers for names the map does not hold; undefined: NXDOMAIN. */
  fallback?: (name: string) => DnsEntry | undefined;
  /** Zone apex -> its SOA's MINIMUM (seconds) and the SOA record's TTL (default: the minimum). */
  zones?: Record<string, { minimum: number; ttl?: number }>;
  /** Each answer is sent this many ms after its query arrived (default 0). */
  delayMs?: number;
}

export interface TestDns {
  port: number;
  address: '127.0.0.1';
  /** Sets (or replaces) the answers for a name; takes effect for the next query. */
  set(name: string, answers: DnsEntry): void;
  /** Removes a name: it answers NXDOMAIN again. */
  delete(name: string): void;
  /** Every query received, in order of arrival. */
  queries(): DnsQueryRecord[];
  clearQueries(): void;
  /** The most queries received and not yet answered at one time (meaningful with delayMs). */
  peakOutstanding(): number;
  close(): Promise<void>;
}

export const DNS_TYPE_A = 1;
export const DNS_TYPE_AAAA = 28;
export const DNS_TYPE_SOA = 6;
const TYPE_NAMES: Record<number, string> = { 1: 'A', 2: 'NS', 5: 'CNAME', 6: 'SOA', 12: 'PTR', 15: 'MX', 16: 'TXT', 28: 'AAAA', 33: 'SRV', 35: 'NAPTR', 255: 'ANY', 257: 'CAA' };
const RCODE_NOERROR = 0;
const RCODE_FORMERR = 1;
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;
const RCODE_NOTIMP = 4;

export function dnsTypeName(type: number): string {
  return TYPE_NAMES[type] ?? `TYPE${type}`;
}

/** 'Example.TEST.' -> 'example.test' */
function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

function validateEntry(name: string, entry: DnsEntry): DnsEntry {
  if (entry === 'nxdomain' || entry === 'servfail') return entry;
  if (!Number.isInteger(entry.ttl) || entry.ttl < 0 || entry.ttl > 0x7fffffff) throw new Error(`testdns: ${name}: ttl must be an integer in [0, 2^31-1], got ${entry.ttl}`);
  for (const a of entry.a ?? []) if (!isIPv4(a)) throw new Error(`testdns: ${name}: not an IPv4 address: ${a}`);
  for (const a of entry.aaaa ?? []) if (!isIPv6(a)) throw new Error(`testdns: ${name}: not an IPv6 address: ${a}`);
  return { ...(entry.a ? { a: entry.a.slice() } : {}), ...(entry.aaaa ? { aaaa: entry.aaaa.slice() } : {}), ttl: entry.ttl };
}

function ipv4Bytes(address: string): Buffer {
  return Buffer.from(address.split('.').map(Number));
}

/** 16 bytes of an IPv6 address ('::' and a trailing dotted quad allowed; no zone id). */
export function ipv6Bytes(address: string): Buffer {
  let text = address;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    const [a, b, c, d] = text.slice(lastColon + 1).split('.').map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    text = `${text.slice(0, lastColon + 1)}0`; // placeholder group, dropped below
  }
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  let groups: number[];
  const gap = text.indexOf('::');
  if (gap >= 0) {
    const head = parse(text.slice(0, gap));
    const rest = parse(text.slice(gap + 2));
    if (tail.length) rest.pop();
    const fill = 8 - tail.length - head.length - rest.length;
    groups = [...head, ...new Array<number>(fill).fill(0), ...rest, ...tail];
  } else {
    groups = parse(text);
    if (tail.length) groups = [...groups.slice(0, -1), ...tail];
  }
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) throw new Error(`testdns: bad IPv6 address ${address}`);
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

interface ParsedQuery {
  id: number;
  flags: number;
  name: string;
  type: number;
  /** The question section as received (name in the client's case, type, class). */
  question: Buffer;
}

/** The header and first question of a query; null when it is not a well-formed query. */
function parseQuery(msg: Buffer): ParsedQuery | { id: number; flags: number; error: number } | null {
  if (msg.length < 12) return null;
  const id = msg.readUInt16BE(0);
  const flags = msg.readUInt16BE(2);
  if (flags & 0x8000) return null; // a response, not a query
  const opcode = (flags >> 11) & 0xf;
  if (opcode !== 0) return { id, flags, error: RCODE_NOTIMP };
  if (msg.readUInt16BE(4) < 1) return { id, flags, error: RCODE_FORMERR };
  const labels: string[] = [];
  let off = 12;
  for (;;) {
    if (off >= msg.length) return { id, flags, error: RCODE_FORMERR };
    const len = msg[off]!;
    if (len === 0) {
      off += 1;
      break;
    }
    if (len > 63 || off + 1 + len > msg.length) return { id, flags, error: RCODE_FORMERR }; // no pointers in a question
    labels.push(msg.toString('latin1', off + 1, off + 1 + len));
    off += 1 + len;
  }
  if (off + 4 > msg.length) return { id, flags, error: RCODE_FORMERR };
  const type = msg.readUInt16BE(off);
  return { id, flags, name: normalizeName(labels.join('.')), type, question: msg.subarray(12, off + 4) };
}

function header(id: number, queryFlags: number, rcode: number, qdcount: number, ancount: number, nscount = 0): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt16BE(id, 0);
  // QR=1, opcode copied, AA=1, TC=0, RD copied, RA=1, Z=0, RCODE.
  const flags = 0x8000 | (queryFlags & 0x7800) | 0x0400 | (queryFlags & 0x0100) | 0x0080 | (rcode & 0xf);
  h.writeUInt16BE(flags, 2);
  h.writeUInt16BE(qdcount, 4);
  h.writeUInt16BE(ancount, 6);
  h.writeUInt16BE(nscount, 8);
  return h;
}

/** One answer RR whose owner name is a compression pointer to the question name (offset 12). */
function answerRR(type: number, ttl: number, rdata: Buffer): Buffer {
  return resourceRecord(Buffer.from([0xc0, 0x0c]), type, ttl, rdata);
}

function resourceRecord(owner: Buffer, type: number, ttl: number, rdata: Buffer): Buffer {
  const rr = Buffer.alloc(10);
  rr.writeUInt16BE(type, 0);
  rr.writeUInt16BE(1, 2); // class IN
  rr.writeUInt32BE(ttl >>> 0, 4);
  rr.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([owner, rr, rdata]);
}

/** A name in wire form, uncompressed: length-prefixed labels and the root's zero. */
function wireName(name: string): Buffer {
  const labels = name === '' ? [] : name.split('.');
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
}

export interface DnsZone {
  /** The apex, normalized. */
  name: string;
  minimum: number;
  ttl: number;
}

function soaRdata(zone: DnsZone): Buffer {
  const numbers = Buffer.alloc(20);
  [1, 3600, 600, 86_400, zone.minimum].forEach((n, i) => numbers.writeUInt32BE(n, i * 4)); // serial, refresh, retry, expire, minimum
  return Buffer.concat([wireName(`ns.${zone.name}`), wireName(`hostmaster.${zone.name}`), numbers]);
}

function soaRR(zone: DnsZone, owner: Buffer): Buffer {
  return resourceRecord(owner, DNS_TYPE_SOA, zone.ttl, soaRdata(zone));
}

/** The response to one query, given the current map. Exported for unit tests of the wire format. */
export function dnsResponse(msg: Buffer, lookup: (name: string) => DnsEntry | undefined, zoneOf: (name: string) => DnsZone | undefined = () => undefined): Buffer | null {
  const q = parseQuery(msg);
  if (!q) return null;
  if ('error' in q) return header(q.id, q.flags, q.error, 0, 0);
  const zone = zoneOf(q.name);
  const apex = zone?.name === q.name;
  // an apex exists even with no addresses of its own
  const entry = lookup(q.name) ?? (apex ? { ttl: zone.minimum } : undefined);
  // RFC 2308 §3: a negative answer carries the zone's SOA in its authority section
  const authority = zone ? [soaRR(zone, wireName(zone.name))] : [];
  if (entry === undefined || entry === 'nxdomain') return Buffer.concat([header(q.id, q.flags, RCODE_NXDOMAIN, 1, 0, authority.length), q.question, ...authority]);
  if (entry === 'servfail') return Buffer.concat([header(q.id, q.flags, RCODE_SERVFAIL, 1, 0), q.question]);
  let answers: Buffer[] = [];
  if (q.type === DNS_TYPE_A) answers = (entry.a ?? []).map((a) => answerRR(DNS_TYPE_A, entry.ttl, ipv4Bytes(a)));
  else if (q.type === DNS_TYPE_AAAA) answers = (entry.aaaa ?? []).map((a) => answerRR(DNS_TYPE_AAAA, entry.ttl, ipv6Bytes(a)));
  else if (q.type === DNS_TYPE_SOA && apex) answers = [soaRR(zone, Buffer.from([0xc0, 0x0c]))];
  if (answers.length === 0) return Buffer.concat([header(q.id, q.flags, RCODE_NOERROR, 1, 0, authority.length), q.question, ...authority]);
  return Buffer.concat([header(q.id, q.flags, RCODE_NOERROR, 1, answers.length), q.question, ...answers]);
}

/** The zone a name is in: the longest apex it ends with. */
function zoneFinder(zones: TestDnsOptions['zones'] = {}): (name: string) => DnsZone | undefined {
  const byName = new Map<string, DnsZone>();
  for (const [apex, z] of Object.entries(zones)) {
    const name = normalizeName(apex);
    if (!Number.isInteger(z.minimum) || z.minimum < 0) throw new Error(`testdns: zone ${name}: minimum must be a non-negative integer`);
    byName.set(name, { name, minimum: z.minimum, ttl: z.ttl ?? z.minimum });
  }
  return (name) => {
    for (let at = name; ; ) {
      const zone = byName.get(at);
      if (zone) return zone;
      const dot = at.indexOf('.');
      if (dot < 0) return undefined;
      at = at.slice(dot + 1);
    }
  };
}

export async function startTestDns(records: Record<string, DnsEntry> | Map<string, DnsEntry> = {}, options: TestDnsOptions = {}): Promise<TestDns> {
  const map = new Map<string, DnsEntry>();
  const set = (name: string, entry: DnsEntry) => {
    const key = normalizeName(name);
    map.set(key, validateEntry(key, entry));
  };
  for (const [name, entry] of records instanceof Map ? records : Object.entries(records)) set(name, entry);
  let log: DnsQueryRecord[] = [];
  const zoneOf = zoneFinder(options.zones);
  const lookup = (name: string) => map.get(name) ?? options.fallback?.(name);
  let outstanding = 0;
  let peak = 0;

  const socket: Socket = createSocket({ type: 'udp4' });
  socket.on('message', (msg: Buffer, from: RemoteInfo) => {
    const at = Date.now();
    let reply: Buffer | null;
    try {
      const q = parseQuery(msg);
      if (q && !('error' in q)) log.push({ name: q.name, type: dnsTypeName(q.type), at, id: q.id });
      reply = dnsResponse(msg, lookup, zoneOf);
    } catch {
      reply = null;
    }
    // Replies only ever go back to the (loopback) sender of the query.
    if (!reply || !from.address.startsWith('127.')) return;
    const send = (r: Buffer) => socket.send(r, from.port, from.address);
    if (!options.delayMs) return send(reply);
    outstanding += 1;
    peak = Math.max(peak, outstanding);
    setTimeout(() => {
      outstanding -= 1;
      if (!closed) send(reply);
    }, options.delayMs);
  });
  let closed = false;
  socket.on('error', () => {
    /* a send to a vanished client; nothing to do */
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  return {
    port: socket.address().port,
    address: '127.0.0.1',
    set,
    delete: (name) => {
      map.delete(normalizeName(name));
    },
    queries: () => log.slice(),
    clearQueries: () => {
      log = [];
    },
    peakOutstanding: () => peak,
    close: () =>
      new Promise<void>((resolve) => {
        if (closed) return resolve();
        closed = true;
        socket.close(() => resolve());
      }),
  };
}
