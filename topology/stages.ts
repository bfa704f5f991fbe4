import type { BucketName } from './buckets.js';
import { EDGES, edgeOf, subjectPattern, SUBJECTS, type EdgeName, type SubjectName } from './edges.js';
import type { StageInputSpec } from './stage-input.js';

/**
 * What a stage does on streams besides reading its consumer and publishing, in the
 * topology's words; ops/nats/permissions.ts turns each into the JetStream API subjects it
 * needs.
 */
export type DirectUse =
  /** reads messages by sequence (direct gets, a miss confirmed by the stream's leader); `bySubject`: the next one on a subject too */
  | { readsBySequence: EdgeName; bySubject?: true }
  /** deletes messages it has served */
  | { deletesFrom: EdgeName }
  /** reads a bucket's entry on the bucket's leader (a replica may lag) */
  | { readsLeaderCopyOf: BucketName }
  /** reads how far behind a stage's consumer is */
  | { lagOf: string }
  /** reads how far behind every stage reading an edge is */
  | { lagOfReadersOf: EdgeName }
  /** watches a bucket (an ordered consumer with flow control); `listsKeys`: and reads that consumer's info */
  | { watches: BucketName; listsKeys?: true }
  /** declares the consumers of the partitions it takes over */
  | { createsPartitionConsumers: true };

/** One stage of the dataflow: the consumer it reads, what it publishes, the state it keeps. */
export interface StageEntry {
  /** its durable consumer, named after the stage */
  input: {
    edge: EdgeName;
    /**
     * the subjects of the edge it reads; none: the whole stream. Several must share a prefix
     * no other subject of the edge has: the consumer reads `<prefix>.>`
     */
    subjects?: readonly SubjectName[];
    /** how long the server waits for an ack before redelivering */
    ackWaitMs: number;
    /** unacked messages for all its processes together */
    maxAckPending: number;
    /** one durable per partition (`<stage>-p<N>`), read only by the process holding that partition */
    partitioned?: true;
  };
  /** the subjects it publishes on, besides its dead letters */
  publishes: readonly SubjectName[];
  /** the KV buckets it reads and writes, besides the settings and jobs every stage reads */
  buckets: { read: readonly BucketName[]; write: readonly BucketName[] };
  uses?: readonly DirectUse[];
}

/**
 * The stages, in dataflow order. Adding a stage is a folder `stages/<name>/` and an entry
 * here: its consumer, the role permissions and the stage list are derived from it.
 */
export const STAGES = {
  normalize: {
    // the whole stream: seeds and links
    input: { edge: 'discovered', ackWaitMs: 30_000, maxAckPending: 2_000 },
    publishes: ['normalized', 'outcomes'],
    buckets: { read: ['scope'], write: ['scope'] },
  },
  'seen-filter': {
    // per partition: also bounds the messages a takeover must treat as possibly in flight
    input: { edge: 'normalized', subjects: ['normalized'], ackWaitMs: 30_000, maxAckPending: 1_000, partitioned: true },
    publishes: ['frontier', 'outcomes'],
    // the traps bucket: how many domains have a stored page (--target-unique-domains);
    // the importance bucket: its in-link counts per domain, for the gates
    buckets: { read: ['seen', 'seenKeys', 'traps'], write: ['seen', 'seenKeys', 'importance'] },
    uses: [{ createsPartitionConsumers: true }],
  },
  'politeness-gate': {
    // intake acks at once (waiting URLs sit in the host queues), so this only bounds a burst
    input: { edge: 'frontier', subjects: ['frontier'], ackWaitMs: 30_000, maxAckPending: 2_000 },
    publishes: ['hostq', 'ready', 'outcomes', 'exchanges', 'links'],
    // the seen bucket: a URL the first pass held counts against --max-pages when granted
    buckets: { read: ['hosts', 'traps', 'robots', 'seen'], write: ['hosts', 'traps', 'robots', 'seen'] },
    uses: [
      // the per-host queues are read by subject and sequence
      { readsBySequence: 'hostq', bySubject: true },
      // a URL it settles without a request leaves its host's queue (served-urls.ts)
      { deletesFrom: 'hostq' },
      // "this host has no work" is confirmed by the hosts bucket's leader when it has replicas
      { readsLeaderCopyOf: 'hosts' },
      // how far behind fetch is (host-level priority), and the readers of fetched pages (it holds fetching back for them)
      { lagOf: 'fetch' },
      { lagOfReadersOf: 'fetched' },
      // every gate watches the hosts bucket, and lists its keys for the waiting-hosts gauge
      { watches: 'hosts', listsKeys: true },
      // and the importance bucket (the seen-filters' in-link counts), which it never writes
      { watches: 'importance' },
    ],
  },
  fetch: {
    input: { edge: 'ready', subjects: ['ready'], ackWaitMs: 30_000, maxAckPending: 2_000 },
    // (a body too large for its message is stored beside it, on crawl.bodies.<p>)
    publishes: ['fetched', 'exchanges', 'links', 'outcomes', 'frontier', 'revisit', 'bodies'],
    buckets: { read: ['hosts', 'validators'], write: ['hosts'] },
    // a grant is dropped as lost only on the hosts bucket leader's copy when it has replicas,
    // and a URL whose grant it confirmed leaves its host's queue (served-urls.ts)
    uses: [{ readsLeaderCopyOf: 'hosts' }, { deletesFrom: 'hostq' }],
  },
  render: {
    // the runner marks a message in progress while its render runs, so this only bounds a dead process;
    // each message holds a page and a render costs seconds: a short queue per consumer is plenty
    input: { edge: 'render', subjects: ['render'], ackWaitMs: 60_000, maxAckPending: 256 },
    // the rendered page back to extract (and the archive), and the exchanges its requests made (robots.txt included) to the archive
    publishes: ['rendered', 'exchanges', 'bodies'],
    // a page's requests take their host's slot and robots.txt like a fetch and the gate
    buckets: { read: ['hosts', 'robots'], write: ['hosts', 'robots'] },
    uses: [{ readsBySequence: 'bodies' }],
  },
  extract: {
    // pages as fetched and as rendered (crawl.fetched.>), not the other exchanges
    input: { edge: 'fetched', subjects: ['fetched', 'rendered'], ackWaitMs: 30_000, maxAckPending: 1_000 },
    publishes: ['extracted', 'links', 'outcomes', 'render'],
    buckets: { read: ['validators'], write: ['validators'] },
    uses: [{ readsBySequence: 'bodies' }],
  },
  simhash: {
    input: { edge: 'extracted', subjects: ['extracted'], ackWaitMs: 30_000, maxAckPending: 2_000 },
    publishes: ['pages', 'outcomes', 'revisit'],
    buckets: { read: ['fingerprints', 'traps'], write: ['fingerprints', 'traps'] },
  },
  persist: {
    // the whole stream: pages and outcomes; a message is acked only once the file holding
    // its rows is written, so the batch size bounds this
    input: { edge: 'results', ackWaitMs: 30_000, maxAckPending: 5_000 },
    publishes: [],
    buckets: { read: [], write: [] },
  },
  archive: {
    // the whole stream: pages and the other exchanges; a message is acked only once its
    // batch is durable, and bodies wait in memory until then
    input: { edge: 'fetched', ackWaitMs: 30_000, maxAckPending: 2_000 },
    publishes: [],
    buckets: { read: ['digests'], write: ['digests'] },
    uses: [{ readsBySequence: 'bodies' }],
  },
} as const satisfies Record<string, StageEntry>;

export type StageName = keyof typeof STAGES;

/** The stages, in dataflow order. */
export const STAGE_NAMES: readonly StageName[] = Object.keys(STAGES) as StageName[];

/** The buckets every stage reads: the crawl's settings and its jobs. */
export const EVERY_STAGE_READS: readonly BucketName[] = ['config', 'jobs'];

/** One filter subject for `subjects`: its pattern, or for several `<their common prefix>.>`. */
export function filterOf(subjects: readonly SubjectName[]): string {
  if (subjects.length === 1) return subjectPattern(subjects[0]!);
  const tokens = subjects.map((name) => SUBJECTS[name].split('.'));
  const common: string[] = [];
  for (let i = 0; tokens.every((t) => i < t.length && t[i] === tokens[0]![i]); i++) common.push(tokens[0]![i]!);
  return `${common.join('.')}.>`;
}

/** `name`'s durable consumer, as the server holds it. */
export function stageInput(name: StageName): StageInputSpec {
  const input: StageEntry['input'] = STAGES[name].input;
  return {
    stream: EDGES[input.edge].stream,
    durable: name,
    filterSubject: input.subjects ? filterOf(input.subjects) : '',
    ackWaitMs: input.ackWaitMs,
    maxAckPending: input.maxAckPending,
    ...(input.partitioned ? { partitioned: true } : {}),
  };
}

/** Every stage's consumer, for applying the topology. */
export const STAGE_INPUTS: readonly StageInputSpec[] = STAGE_NAMES.map(stageInput);

/** The edges a stage publishes to (its dead letters aside). */
export const edgesPublishedBy = (name: StageName): EdgeName[] => [...new Set(STAGES[name].publishes.map(edgeOf))];

/** The stages that read `edge` through their consumer. */
export const readersOf = (edge: EdgeName): StageName[] => STAGE_NAMES.filter((name) => STAGES[name].input.edge === edge);

/** The fetch stage's durable consumer: the gate watches how far behind it is (host-level priority). */
export const FETCH_DURABLE = stageInput('fetch').durable;
/** The consumers of fetched pages: the gate holds fetching back while any is far behind. */
export const FETCHED_READERS: readonly StageName[] = readersOf('fetched');

/**
 * The edges a stage module's stage may read (pipeline/custom-stage.ts), by the name its
 * definition gives as `input`: the subjects its consumer reads.
 */
export const CUSTOM_STAGE_INPUTS = {
  fetched: ['fetched', 'rendered'],
  extracted: ['extracted'],
  pages: ['pages'],
  outcomes: ['outcomes'],
} as const satisfies Record<string, readonly SubjectName[]>;

/** A stage module's durable consumer: named after its stage, on the stream of its input. */
export function customStageInputOf(name: string, input: keyof typeof CUSTOM_STAGE_INPUTS, ackWaitMs: number, maxAckPending: number): StageInputSpec {
  const subjects: readonly SubjectName[] = CUSTOM_STAGE_INPUTS[input];
  return {
    stream: EDGES[edgeOf(subjects[0]!)].stream,
    durable: name,
    filterSubject: filterOf(subjects),
    ackWaitMs,
    maxAckPending,
  };
}
