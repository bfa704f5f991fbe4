/**
 * Least privilege on a shared NATS cluster: one account for the crawl (its streams and
 * buckets are invisible to other teams' accounts), and in it one user per role, allowed the
 * subjects that role uses and nothing else. A stage worker may read its own durable
 * consumer, publish its outputs and its dead letters, and use the KV buckets it keeps
 * state in; the seeding user may publish `crawl.seeds` (and the seeds' scope) only; an API client may send the
 * jobs API's requests only. `operator` (topology apply, `crawl run`, `crawl serve`, status,
 * replay, dead-letters) manages streams and consumers and has the whole account.
 *
 * The lists were taken from a protocol trace of a crawl by one worker per stage (every
 * subject each connection published or subscribed to), and are checked by the end-to-end
 * test that runs such a crawl with every worker under its role's user.
 * `ops/nats/accounts.conf` is this, written out for copying (a unit test keeps it current).
 */
import { BUCKETS, EDGES, FETCHED_READERS, SUBJECTS } from './edges.js';

export interface SubjectPermissions {
  publish: string[];
  subscribe: string[];
}

type Bucket = (typeof BUCKETS)[keyof typeof BUCKETS];

interface StageRole {
  /** the stream and durable the stage reads (a partitioned stage: `<durable>-p<N>`, any N) */
  stream: string;
  durable: string;
  partitioned?: boolean;
  /** subjects it publishes messages on */
  outputs: string[];
  read: Bucket[];
  write: Bucket[];
  /** JetStream API calls beyond reading its own consumer */
  api?: string[];
}

const every = (prefix: string) => `${prefix}.*`;

/** Reading a body stored beside its message: direct gets by sequence, a miss confirmed by the stream's leader. */
const READ_BODIES = [`$JS.API.DIRECT.GET.${EDGES.bodies.stream}`, `$JS.API.STREAM.MSG.GET.${EDGES.bodies.stream}`];

/** What each stage does on NATS (besides its consumer, the crawl settings and the jobs it reads). */
export const STAGE_ROLES: Record<string, StageRole> = {
  normalize: {
    stream: EDGES.discovered.stream,
    durable: 'normalize',
    outputs: [every(SUBJECTS.normalized), every(SUBJECTS.outcomes)],
    read: [BUCKETS.scope],
    write: [BUCKETS.scope],
  },
  'seen-filter': {
    stream: EDGES.normalized.stream,
    durable: 'seen-filter',
    partitioned: true,
    outputs: [every(SUBJECTS.frontier), every(SUBJECTS.outcomes)],
    // the traps bucket: how many domains have a stored page (--target-unique-domains)
    read: [BUCKETS.seen, BUCKETS.seenKeys, BUCKETS.traps],
    // the importance bucket: its in-link counts per domain, for the gates
    write: [BUCKETS.seen, BUCKETS.seenKeys, BUCKETS.importance],
    // it declares the consumers of the partitions it takes over
    api: [`$JS.API.CONSUMER.CREATE.${EDGES.normalized.stream}.>`, `$JS.API.CONSUMER.DURABLE.CREATE.${EDGES.normalized.stream}.>`],
  },
  'politeness-gate': {
    stream: EDGES.frontier.stream,
    durable: 'politeness-gate',
    outputs: [`${SUBJECTS.hostq}.>`, every(SUBJECTS.ready), every(SUBJECTS.outcomes), every(SUBJECTS.exchanges), every(SUBJECTS.links)],
    // the seen bucket: a URL the first pass held counts against --max-pages when granted
    read: [BUCKETS.hosts, BUCKETS.traps, BUCKETS.robots, BUCKETS.seen],
    write: [BUCKETS.hosts, BUCKETS.traps, BUCKETS.robots, BUCKETS.seen],
    api: [
      // the per-host queues are read by subject and sequence (direct gets; an empty answer
      // is confirmed by the stream's leader, a replica may lag)
      `$JS.API.DIRECT.GET.${EDGES.hostq.stream}`,
      `$JS.API.DIRECT.GET.${EDGES.hostq.stream}.>`,
      `$JS.API.STREAM.MSG.GET.${EDGES.hostq.stream}`,
      // a URL it settles without a request leaves its host's queue (served-urls.ts)
      `$JS.API.STREAM.MSG.DELETE.${EDGES.hostq.stream}`,
      // "this host has no work" is confirmed by the hosts bucket's leader when it has replicas
      `$JS.API.STREAM.INFO.KV_${BUCKETS.hosts}`,
      `$JS.API.STREAM.MSG.GET.KV_${BUCKETS.hosts}`,
      // how far behind fetch is (host-level priority)
      `$JS.API.CONSUMER.INFO.${EDGES.ready.stream}.fetch`,
      // how far behind the readers of fetched pages are (the gate holds fetching back for them)
      ...FETCHED_READERS.map((durable) => `$JS.API.CONSUMER.INFO.${EDGES.fetched.stream}.${durable}`),
      // every gate watches the hosts bucket (an ordered consumer, with flow control)
      `$JS.API.CONSUMER.CREATE.KV_${BUCKETS.hosts}.>`,
      `$JS.API.CONSUMER.DELETE.KV_${BUCKETS.hosts}.>`,
      `$JS.FC.KV_${BUCKETS.hosts}.>`,
      // the waiting-hosts gauge lists the bucket's keys (an ordered consumer whose info it reads)
      `$JS.API.CONSUMER.INFO.KV_${BUCKETS.hosts}.>`,
      // and watches the importance bucket (the seen-filters' in-link counts), which it never writes
      `$JS.API.CONSUMER.CREATE.KV_${BUCKETS.importance}.>`,
      `$JS.API.CONSUMER.DELETE.KV_${BUCKETS.importance}.>`,
      `$JS.FC.KV_${BUCKETS.importance}.>`,
    ],
  },
  fetch: {
    stream: EDGES.ready.stream,
    durable: 'fetch',
    // (a body too large for its message is stored beside it, on crawl.bodies.<p>)
    outputs: [every(SUBJECTS.fetched), every(SUBJECTS.exchanges), every(SUBJECTS.links), every(SUBJECTS.outcomes), every(SUBJECTS.frontier), `${SUBJECTS.revisit}.*.*`, every(SUBJECTS.bodies)],
    read: [BUCKETS.hosts, BUCKETS.validators],
    write: [BUCKETS.hosts],
    // a grant is dropped as lost only on the hosts bucket leader's copy when it has replicas
    // and a URL whose grant it confirmed leaves its host's queue (served-urls.ts)
    api: [`$JS.API.STREAM.INFO.KV_${BUCKETS.hosts}`, `$JS.API.STREAM.MSG.GET.KV_${BUCKETS.hosts}`, `$JS.API.STREAM.MSG.DELETE.${EDGES.hostq.stream}`],
  },
  render: {
    stream: EDGES.render.stream,
    durable: 'render',
    // the rendered page back to extract, and the exchanges its requests made (robots.txt included) to the archive
    outputs: [every(SUBJECTS.fetched), every(SUBJECTS.exchanges), every(SUBJECTS.bodies)],
    // a page's requests take their host's slot and robots.txt like a fetch and the gate
    read: [BUCKETS.hosts, BUCKETS.robots],
    write: [BUCKETS.hosts, BUCKETS.robots],
    api: READ_BODIES,
  },
  extract: {
    stream: EDGES.fetched.stream,
    durable: 'extract',
    outputs: [every(SUBJECTS.extracted), every(SUBJECTS.links), every(SUBJECTS.outcomes), every(SUBJECTS.render)],
    read: [BUCKETS.validators],
    write: [BUCKETS.validators],
    api: READ_BODIES,
  },
  simhash: {
    stream: EDGES.extracted.stream,
    durable: 'simhash',
    outputs: [every(SUBJECTS.pages), every(SUBJECTS.outcomes), `${SUBJECTS.revisit}.*.*`],
    read: [BUCKETS.fingerprints, BUCKETS.traps],
    write: [BUCKETS.fingerprints, BUCKETS.traps],
  },
  persist: {
    stream: EDGES.results.stream,
    durable: 'persist',
    outputs: [],
    read: [],
    write: [],
  },
  archive: {
    stream: EDGES.fetched.stream,
    durable: 'archive',
    outputs: [],
    read: [BUCKETS.digests],
    write: [BUCKETS.digests],
    api: READ_BODIES,
  },
};

export const ROLES = ['operator', 'seeder', 'api-client', ...Object.keys(STAGE_ROLES)] as const;

/** Replies to this user's requests (JetStream API answers, publish acks, pulled messages) come to its inboxes. */
const INBOX = '_INBOX.>';

/** What a process asks before it joins a crawl (ops/nats/jetstream-ready.ts). */
const JOIN_CHECKS = ['$JS.API.INFO', '$JS.API.STREAM.LIST'];

/** The subjects `role` may publish and subscribe to. */
export function rolePermissions(role: string): SubjectPermissions {
  if (role === 'operator') return { publish: ['>'], subscribe: ['>'] };
  // `$JS.API.INFO` (the account's JetStream limits and use) and `$JS.API.STREAM.LIST` (the
  // streams' configuration and state: which have a leader) let a joining process wait until
  // JetStream answers and a cluster has elected its leaders; they read no message and change nothing
  // `$KV.crawl-scope.>`: the seeds' scope, put before the seeds (app/seeding.ts); a seed puts the same keys itself
  if (role === 'seeder') return { publish: [SUBJECTS.seeds, `$KV.${BUCKETS.scope}.>`, ...JOIN_CHECKS], subscribe: [INBOX] };
  if (role === 'api-client') return { publish: ['crawl.api.jobs.*'], subscribe: [INBOX] };
  const s = STAGE_ROLES[role];
  if (!s) throw new Error(`no role ${role}: one of ${ROLES.join(', ')}`);
  const consumer = s.partitioned ? `${s.stream}.*` : `${s.stream}.${s.durable}`;
  const reads = [...new Set([...s.read, BUCKETS.config, BUCKETS.jobs])];
  return {
    publish: [
      ...s.outputs,
      `${SUBJECTS.deadletter}.${role}`,
      ...JOIN_CHECKS,
      `$JS.API.CONSUMER.INFO.${consumer}`,
      `$JS.API.CONSUMER.MSG.NEXT.${consumer}`,
      // acks, naks and in-progress signals are replies to the delivered message's subject
      `$JS.ACK.${consumer}.>`,
      ...reads.map((b) => `$JS.API.DIRECT.GET.KV_${b}.>`),
      ...s.write.map((b) => `$KV.${b}.>`),
      ...(s.api ?? []),
    ],
    subscribe: [INBOX],
  };
}

const quoted = (list: readonly string[]) => `[${list.map((s) => JSON.stringify(s)).join(', ')}]`;

/**
 * A nats-server `accounts` block: the `CRAWL` account with JetStream, one user per role.
 * `credential(role)` is what authenticates that user, e.g. `password: $CRAWL_FETCH_PASSWORD`
 * (nats-server reads `$NAME` from the environment) or `nkey: UA...`.
 */
export function accountsConfig(credential: (role: string) => string, roles: readonly string[] = ROLES): string {
  const users = roles.map((role) => {
    const p = rolePermissions(role);
    const login = credential(role);
    const user = login.startsWith('nkey:') ? '' : `user: ${JSON.stringify(role)}, `;
    return [
      `      # ${role}`,
      `      { ${user}${login},`,
      `        permissions: {`,
      `          publish: { allow: ${quoted(p.publish)} },`,
      `          subscribe: { allow: ${quoted(p.subscribe)} }`,
      `        } }`,
    ].join('\n');
  });
  return ['accounts {', '  CRAWL {', '    jetstream: enabled', '    users: [', users.join(',\n'), '    ]', '  }', '}', ''].join('\n');
}

/** The environment variable holding `role`'s password in the copyable configuration. */
/** The header of `ops/nats/accounts.conf`. */
export const ACCOUNTS_CONF_HEADER = [
  '# The crawl account and its users, one per role, each allowed only the subjects it needs.',
  '# Generated from ops/nats/permissions.ts by scripts/write-accounts-conf.ts (a unit test compares them).',
  '# Include it in nats-server.conf (`include ./accounts.conf`) and set each password in the',
  "# server's environment, e.g. CRAWL_FETCH_PASSWORD; or put `nkey: U...` in a user's place.",
  '# Each process connects as its role: crawl worker --stage fetch with NATS_USER=fetch and',
  '# NATS_PASSWORD (or --nats-user fetch --nats-password-file FILE); crawl seed as seeder.',
  '',
].join('\n');

export const passwordVariable = (role: string) => `CRAWL_${role.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
