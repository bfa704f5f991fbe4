/**
 * Least privilege on a shared NATS cluster: one account for the crawl (its streams and
 * buckets are invisible to other teams' accounts), and in it one user per role, allowed the
 * subjects that role uses and nothing else. A stage worker may read its own durable
 * consumer, publish its outputs and its dead letters, and use the KV buckets it keeps
 * state in; the seeding user may publish `crawl.seeds` (and the seeds' scope) only; an API client may send the
 * jobs API's requests only. `operator` (topology apply, `crawl run`, `crawl serve`, status,
 * replay, dead-letters) manages streams and consumers and has the whole account.
 *
 * A stage's role is derived from its entry in the topology (topology/stages.ts): its consumer,
 * the subjects it publishes, its buckets and its direct uses of streams. The lists were first
 * taken from a protocol trace of a crawl by one worker per stage (every subject each
 * connection published or subscribed to), and are checked by the end-to-end test that runs
 * such a crawl with every worker under its role's user.
 * `ops/nats/accounts.conf` is this, written out for copying (a unit test keeps it current).
 */
import {
  API_SUBJECTS,
  BUCKETS,
  EDGES,
  EVERY_STAGE_READS,
  readersOf,
  STAGE_NAMES,
  stageInput,
  STAGES,
  SUBJECTS,
  subjectPattern,
  deadLetterSubject,
  customStageInputOf,
  CUSTOM_STAGE_INPUTS,
  type DirectUse,
  type StageEntry,
  type StageName,
} from '../../topology/index.js';

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

const consumerInfo = (stage: string) => {
  const input = stageInput(stage as StageName);
  return `$JS.API.CONSUMER.INFO.${input.stream}.${input.durable}`;
};

/** The JetStream API subjects one of a stage's direct uses of a stream needs. */
function apiOf(use: DirectUse, stage: StageName): string[] {
  if ('readsBySequence' in use) {
    // direct gets by sequence (or next by subject), a miss confirmed by the stream's leader
    const stream = EDGES[use.readsBySequence].stream;
    return [`$JS.API.DIRECT.GET.${stream}`, ...(use.bySubject ? [`$JS.API.DIRECT.GET.${stream}.>`] : []), `$JS.API.STREAM.MSG.GET.${stream}`];
  }
  if ('deletesFrom' in use) return [`$JS.API.STREAM.MSG.DELETE.${EDGES[use.deletesFrom].stream}`];
  if ('readsLeaderCopyOf' in use) {
    const stream = `KV_${BUCKETS[use.readsLeaderCopyOf]}`;
    return [`$JS.API.STREAM.INFO.${stream}`, `$JS.API.STREAM.MSG.GET.${stream}`];
  }
  if ('lagOf' in use) return [consumerInfo(use.lagOf)];
  if ('lagOfReadersOf' in use) return readersOf(use.lagOfReadersOf).map(consumerInfo);
  if ('watches' in use) {
    const stream = `KV_${BUCKETS[use.watches]}`;
    const watch = [`$JS.API.CONSUMER.CREATE.${stream}.>`, `$JS.API.CONSUMER.DELETE.${stream}.>`, `$JS.FC.${stream}.>`];
    return use.listsKeys ? [...watch, `$JS.API.CONSUMER.INFO.${stream}.>`] : watch;
  }
  const own = stageInput(stage).stream;
  return [`$JS.API.CONSUMER.CREATE.${own}.>`, `$JS.API.CONSUMER.DURABLE.CREATE.${own}.>`];
}

function roleOf(name: StageName): StageRole {
  const entry: StageEntry = STAGES[name];
  const input = stageInput(name);
  const uses = entry.uses ?? [];
  return {
    stream: input.stream,
    durable: input.durable,
    ...(input.partitioned ? { partitioned: true } : {}),
    outputs: entry.publishes.map(subjectPattern),
    read: entry.buckets.read.map((b) => BUCKETS[b]),
    write: entry.buckets.write.map((b) => BUCKETS[b]),
    ...(uses.length ? { api: uses.flatMap((use) => apiOf(use, name)) } : {}),
  };
}

/** What each stage does on NATS (besides its consumer, the crawl settings and the jobs it reads), from the topology. */
export const STAGE_ROLES: Record<string, StageRole> = Object.fromEntries(STAGE_NAMES.map((name) => [name, roleOf(name)]));

export const ROLES = ['operator', 'seeder', 'api-client', ...Object.keys(STAGE_ROLES)] as const;

/** The stage-module role accounts.conf shows as an example: copy its block for each of yours, with its name and input. */
export const EXAMPLE_CUSTOM_ROLE = 'custom:products:extracted';

/** Replies to this user's requests (JetStream API answers, publish acks, pulled messages) come to its inboxes. */
const INBOX = '_INBOX.>';

/** What a process asks before it joins a crawl (pipeline/adapters/jetstream-ready.ts). */
const JOIN_CHECKS = ['$JS.API.INFO', '$JS.API.STREAM.LIST'];

/**
 * A stage module's role, `custom:<stage>:<input>` (e.g. `custom:products:extracted`): its own
 * durable on its input's stream (which it declares, so it may create that one consumer and no
 * other), the links it sends into the crawl, its dead letters, and the settings and jobs every
 * stage reads; a stage on fetched pages also reads the bodies stored beside them. Nothing
 * else: it cannot read another stage's consumer nor write any bucket. Its table is files in
 * the output, not NATS.
 */
export function customStagePermissions(stage: string, input: string): SubjectPermissions {
  if (!/^[a-z][a-z0-9-]{0,47}$/.test(stage)) throw new Error(`no role for stage "${stage}": a stage name is lower-case letters, digits and dashes`);
  if (!(input in CUSTOM_STAGE_INPUTS)) throw new Error(`no role for input "${input}": one of ${Object.keys(CUSTOM_STAGE_INPUTS).join(', ')}`);
  const { stream, durable } = customStageInputOf(stage, input as keyof typeof CUSTOM_STAGE_INPUTS, 0, 0);
  const consumer = `${stream}.${durable}`;
  const bodies = input === 'fetched' ? [`$JS.API.DIRECT.GET.${EDGES.bodies.stream}`, `$JS.API.STREAM.MSG.GET.${EDGES.bodies.stream}`] : [];
  return {
    publish: [
      subjectPattern('links'),
      deadLetterSubject(stage),
      ...JOIN_CHECKS,
      `$JS.API.CONSUMER.CREATE.${consumer}`,
      `$JS.API.CONSUMER.CREATE.${consumer}.>`,
      `$JS.API.CONSUMER.DURABLE.CREATE.${consumer}`,
      `$JS.API.CONSUMER.INFO.${consumer}`,
      `$JS.API.CONSUMER.MSG.NEXT.${consumer}`,
      `$JS.ACK.${consumer}.>`,
      ...EVERY_STAGE_READS.map((b) => `$JS.API.DIRECT.GET.KV_${BUCKETS[b]}.>`),
      ...bodies,
    ],
    subscribe: [INBOX],
  };
}

/** The subjects `role` may publish and subscribe to. */
export function rolePermissions(role: string): SubjectPermissions {
  if (role.startsWith('custom:')) {
    const [, stage = '', input = ''] = role.split(':');
    return customStagePermissions(stage, input);
  }
  if (role === 'operator') return { publish: ['>'], subscribe: ['>'] };
  // `$JS.API.INFO` (the account's JetStream limits and use) and `$JS.API.STREAM.LIST` (the
  // streams' configuration and state: which have a leader) let a joining process wait until
  // JetStream answers and a cluster has elected its leaders; they read no message and change nothing
  // `$KV.crawl-scope.>`: the seeds' scope, put before the seeds (app/seeding.ts); a seed puts the same keys itself
  if (role === 'seeder') return { publish: [SUBJECTS.seeds, `$KV.${BUCKETS.scope}.>`, ...JOIN_CHECKS], subscribe: [INBOX] };
  if (role === 'api-client') return { publish: [`${API_SUBJECTS.jobs}.*`], subscribe: [INBOX] };
  const s = STAGE_ROLES[role];
  if (!s) throw new Error(`no role ${role}: one of ${ROLES.join(', ')}`);
  const consumer = s.partitioned ? `${s.stream}.*` : `${s.stream}.${s.durable}`;
  const reads = [...new Set([...s.read, ...EVERY_STAGE_READS.map((b) => BUCKETS[b])])];
  return {
    publish: [
      ...s.outputs,
      deadLetterSubject(role),
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
export function accountsConfig(credential: (role: string) => string, roles: readonly string[] = [...ROLES, EXAMPLE_CUSTOM_ROLE]): string {
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
  '# A stage module (crawl worker --stage-module FILE) runs as custom:<stage>:<input>: the',
  '# custom:products:extracted block below is an example; copy it for each of your stages',
  '# with its name and input (ops/nats/permissions.ts customStagePermissions).',
  '',
].join('\n');

export const passwordVariable = (role: string) => `CRAWL_${role.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PASSWORD`;
