/**
 * The edges of the dataflow: one retained stream per edge. Subjects after normalize are
 * `crawl.<subject>.<partition>`, partition = stable hash of the host (pipeline/partition.ts).
 * Seeds and discovered links are both "URLs into normalize", so they share one stream;
 * stored pages and other outcomes are both "results into persist", so they share one too:
 * that way every stage reads exactly one stream through one durable consumer.
 */
export const EDGES = {
  discovered: { stream: 'CRAWL_DISCOVERED', subjects: ['crawl.seeds', 'crawl.links.*'] },
  normalized: { stream: 'CRAWL_NORMALIZED', subjects: ['crawl.normalized.*'] },
  frontier: { stream: 'CRAWL_FRONTIER', subjects: ['crawl.frontier.*'] },
  /**
   * queues per host, `crawl.hostq.<p>.<hostkey>[.<lane>]`: URLs waiting for their host, read by
   * sequence. A frontier, not a log: no age limit (a URL waits as long as its host makes it), a
   * served URL's message is deleted, and a size limit refuses new URLs instead of dropping
   * waiting ones (`queue`).
   */
  hostq: { stream: 'CRAWL_HOSTQ', subjects: ['crawl.hostq.*.*', 'crawl.hostq.*.*.*'], queue: true },
  ready: { stream: 'CRAWL_READY', subjects: ['crawl.ready.*'] },
  /**
   * pages to extract and every exchange to the archive: the pages fetch sent
   * (`crawl.fetched.<p>`), the pages render sent back (`crawl.fetched.rendered.<p>`), the other
   * exchanges (`crawl.exchanges.<p>`). Rendered pages stay in this stream, under a subject of
   * their own, so that one stream holds every page extract reads, in order (a replay of extract
   * is one stream's), and the bodies their DOMs are stored in are kept as long as they are.
   */
  fetched: { stream: 'CRAWL_FETCHED', subjects: ['crawl.fetched.*', 'crawl.fetched.rendered.*', 'crawl.exchanges.*'] },
  /** fetched pages extract hands to the render stage (headless Chromium) */
  render: { stream: 'CRAWL_RENDER', subjects: ['crawl.render.*'] },
  extracted: { stream: 'CRAWL_EXTRACTED', subjects: ['crawl.extracted.*'] },
  results: { stream: 'CRAWL_RESULTS', subjects: ['crawl.pages.*', 'crawl.outcomes.*'] },
  /**
   * crawl jobs' revisit schedule, `crawl.revisit.<slot>.<job>`: one message per scheduled URL
   * under the time slot it is due in; the service takes each slot when it comes due and purges
   * it. A schedule, not a log: it keeps its messages until then, whatever the retention flags.
   */
  revisits: { stream: 'CRAWL_REVISITS', subjects: ['crawl.revisit.*.*'], schedule: true },
  deadletter: { stream: 'CRAWL_DEADLETTER', subjects: ['crawl.dlq.>'] },
  /**
   * bodies too large for their message (over what the server's max_payload leaves), in chunks,
   * `crawl.bodies.<p>`: a fetched page or exchange refers to its chunks by sequence. Kept with
   * the limits of the fetched stream, whose messages refer to them (`retainedWith`).
   */
  bodies: { stream: 'CRAWL_BODIES', subjects: ['crawl.bodies.*'], retainedWith: 'fetched' },
} as const;

export type EdgeName = keyof typeof EDGES;

/** Subject prefixes a stage publishes under (the partition is appended). */
export const SUBJECTS = {
  seeds: 'crawl.seeds',
  links: 'crawl.links',
  normalized: 'crawl.normalized',
  frontier: 'crawl.frontier',
  hostq: 'crawl.hostq',
  ready: 'crawl.ready',
  fetched: 'crawl.fetched',
  /**
   * pages the render stage sends back (rendered, or as fetched when rendering failed): read by
   * extract, whose one filter subject (nats-server 2.9 gives a consumer one) is then
   * `crawl.fetched.>`, and by the archive (the DOM's record)
   */
  rendered: 'crawl.fetched.rendered',
  /** every HTTP exchange that is not an HTML page (errors, redirects, 304s, other types, robots.txt, failures): read by archive only */
  exchanges: 'crawl.exchanges',
  render: 'crawl.render',
  extracted: 'crawl.extracted',
  pages: 'crawl.pages',
  outcomes: 'crawl.outcomes',
  revisit: 'crawl.revisit',
  deadletter: 'crawl.dlq',
  /** chunks of bodies too large for their message (see EDGES.bodies) */
  bodies: 'crawl.bodies',
} as const;

export type SubjectName = keyof typeof SUBJECTS;

/** `crawl.fetched.3`: a subject on one partition. */
export const partitionSubject = (name: SubjectName, partition: number | string): string => `${SUBJECTS[name]}.${partition}`;

const under = (prefix: string, subject: string) => subject === prefix || subject.startsWith(`${prefix}.`);

/**
 * Whether `subject` is one of `name`'s: `crawl.fetched.3` is one of `fetched`'s, and
 * `crawl.fetched.rendered.3` is `rendered`'s, not `fetched`'s (the longest name wins).
 */
export function isSubjectOf(name: SubjectName, subject: string): boolean {
  const prefix = SUBJECTS[name];
  if (!under(prefix, subject)) return false;
  return !Object.values(SUBJECTS).some((other) => other.length > prefix.length && under(other, subject));
}

/** NATS subject wildcard match (`*` one token, `>` the rest). */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** A stage's dead letters: `crawl.dlq.<stage>`. */
export const deadLetterSubject = (stage: string): string => `${SUBJECTS.deadletter}.${stage}`;

/** The edge (stream) whose subjects hold `name`'s messages. */
export function edgeOf(name: SubjectName): EdgeName {
  const edge = (Object.keys(EDGES) as EdgeName[]).find((e) => EDGES[e].subjects.some((pattern) => isSubjectOf(name, pattern)));
  if (!edge) throw new Error(`no edge holds the subject ${SUBJECTS[name]}`);
  return edge;
}

/**
 * Every subject of `name`, as one wildcard pattern: `crawl.fetched.*`, `crawl.revisit.*.*`,
 * `crawl.seeds`; a subject whose edge has several shapes (the host queues, with and without
 * a lane) is `crawl.hostq.>`.
 */
export function subjectPattern(name: SubjectName): string {
  const shapes = EDGES[edgeOf(name)].subjects.filter((pattern) => isSubjectOf(name, pattern));
  return shapes.length === 1 ? shapes[0]! : `${SUBJECTS[name]}.>`;
}
