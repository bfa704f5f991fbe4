/**
 * The layering of the product code, as rules over its imports (see the README's code map):
 *
 *   api/  ->  cli/  ->  app/  ->  stages/, ops/  ->  pipeline/  ->  ports/, schemas/, topology/
 *
 * each folder may import the ones to its right, never one to its left. topology/ (the
 * dataflow's streams, subjects, buckets and stages) is plain data: it imports nothing, not
 * even a library. ops/ is deployment (servers, applying the topology, permissions): stages
 * and pipeline name streams through topology/ and never import ops/. Within stages/, a
 * stage folder imports only itself and stages/shared/, which imports no stage; stages reach
 * the outside world through ports/ (never pipeline/adapters/); the politeness module
 * (stages/shared/politeness/) is imported through its index.ts only. Libraries that talk to servers (NATS, undici,
 * DuckDB, the S3 client, prom-client) or drive a browser (playwright-core) are imported below
 * the stages only, and prom-client (the metrics registry and its server) only by pipeline/,
 * app/ and cli/. In cli/ and app/, the NATS client is imported only where a process is wired
 * together (the connection opened, the adapters built); the rest publishes through the
 * Publisher port and reads streams through the stream and admin ports. Stages do no file I/O (node:fs): their outputs go through ports. testweb/
 * stands alone. bench/ and scripts/ never import test/.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface SourceFile {
  /** repository-relative, with forward slashes: `stages/fetch/handle.ts` */
  path: string;
  text: string;
}

export interface Violation {
  file: string;
  imports: string;
  rule: string;
}

const PRODUCT_FOLDERS = ['ports', 'schemas', 'topology', 'ops', 'pipeline', 'stages', 'app', 'cli', 'api', 'testweb'] as const;
type Folder = (typeof PRODUCT_FOLDERS)[number];

/** What each folder may import of ours (its own folder is always allowed). */
const MAY_IMPORT: Record<Folder, readonly Folder[]> = {
  ports: [],
  schemas: [],
  topology: [],
  ops: ['pipeline', 'topology'],
  pipeline: ['ports', 'schemas', 'topology'],
  stages: ['pipeline', 'ports', 'schemas', 'topology'],
  app: ['stages', 'ops', 'pipeline', 'ports', 'schemas', 'topology'],
  cli: ['app', 'stages', 'ops', 'pipeline', 'ports', 'schemas', 'topology', 'testweb'],
  // the package's public face (package.json exports): a library's entry to what the commands do
  api: ['cli', 'app', 'pipeline', 'schemas'],
  testweb: [],
};

/** Libraries that open connections (a browser opens many): the stages get them through ports and the context. */
const SERVER_LIBRARIES = /^(@nats-io\/|nats$|undici$|@duckdb\/|@aws-sdk\/|prom-client$|playwright-core$|playwright$|puppeteer(-core)?$)/;
const NO_SERVER_LIBRARIES: readonly Folder[] = ['stages', 'schemas', 'ports'];
/** Metrics are counted through StageMetrics (pipeline/metrics.ts) and served by pipeline/metrics-server.ts. */
const METRICS_LIBRARY = /^prom-client$/;
const METRICS_FOLDERS: readonly Folder[] = ['pipeline', 'app', 'cli'];
/**
 * The NATS client in cli/ and app/: only the files that open the connection and build the
 * adapters on it (a command's connection; a node's stages; the jobs service). Everything else
 * there publishes through the Publisher port and reads streams through ports/streams.ts and
 * ports/stream-admin.ts, so it runs against fakes and says what it needs of the server.
 */
const NATS_CLIENT = /^(@nats-io\/|nats$)/;
const NATS_WIRING_FOLDERS: readonly Folder[] = ['cli', 'app'];
const NATS_WIRING_FILES: readonly string[] = ['cli/connection.ts', 'app/node.ts', 'app/service/service.ts'];

/** Folders that name streams through topology/ and may not reach deployment code in ops/. */
const BELOW_DEPLOYMENT: readonly Folder[] = ['stages', 'pipeline'];
/** Plain data: no library either (node: built-ins included). */
const NO_LIBRARIES: readonly Folder[] = ['topology'];
/** The file system: stages write files through the output ports (ports/warc-sink.ts, the row sink), whose adapters are in pipeline/adapters/. */
const FILE_SYSTEM = /^(node:)?fs(\/promises)?$/;
const NO_FILE_SYSTEM: readonly Folder[] = ['stages'];
/**
 * Modules whose index.ts is their only public face: code outside the module imports that
 * file, so what lives behind it (politeness: the host slot, IP slot and pacing behind a host's
 * turn) can change without touching its users.
 */
const ONE_FACE_MODULES = ['stages/shared/politeness/'];

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push((m[1] ?? m[2])!);
  return out;
}

const folderOf = (p: string): Folder | null => {
  const top = p.split('/')[0] as Folder;
  return (PRODUCT_FOLDERS as readonly string[]).includes(top) ? top : null;
};

/** `stages/fetch/handle.ts` -> `fetch`; shared -> `shared`; a file directly in stages/ -> null */
const stageFolderOf = (p: string): string | null => {
  const parts = p.split('/');
  return parts[0] === 'stages' && parts.length > 2 ? parts[1]! : null;
};

export function checkImports(files: readonly SourceFile[]): Violation[] {
  const violations: Violation[] = [];
  for (const f of files) {
    if (TOOL_FOLDERS.includes(f.path.split('/')[0]!)) {
      violations.push(...toolViolations(f));
      continue;
    }
    const from = folderOf(f.path);
    if (!from) continue;
    for (const spec of importsOf(f.text)) {
      const add = (rule: string) => violations.push({ file: f.path, imports: spec, rule });
      if (!spec.startsWith('.')) {
        if (NO_LIBRARIES.includes(from)) add(`${from}/ imports nothing, no library either (${spec}): it is plain data`);
        else if (NO_FILE_SYSTEM.includes(from) && FILE_SYSTEM.test(spec)) add(`${from}/ does not use the file system (${spec}): outputs go through the WARC and row sink ports`);
        else if (NO_SERVER_LIBRARIES.includes(from) && SERVER_LIBRARIES.test(spec)) add(`${from}/ does not import server libraries (${spec}): they come through ports/ and the stage context`);
        else if (!METRICS_FOLDERS.includes(from) && METRICS_LIBRARY.test(spec)) add(`only pipeline/, app/ and cli/ import ${spec}: metrics are counted through ctx.metrics`);
        else if (NATS_WIRING_FOLDERS.includes(from) && NATS_CLIENT.test(spec) && !NATS_WIRING_FILES.includes(f.path)) {
          add(`in cli/ and app/ only ${NATS_WIRING_FILES.join(', ')} import ${spec} (they wire a process); the rest publishes and reads through ports/`);
        }
        continue;
      }
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(f.path), spec)).replace(/\.js$/, '.ts');
      const to = folderOf(target);
      if (!to) {
        add(`product code imports only product folders (${PRODUCT_FOLDERS.join(', ')})`);
        continue;
      }
      if (BELOW_DEPLOYMENT.includes(from) && to === 'ops') {
        add(`${from}/ names streams through topology/, never ops/ (deployment: servers, applying the topology, permissions)`);
        continue;
      }
      if (to !== from && !MAY_IMPORT[from].includes(to)) {
        add(`${from}/ may import ${MAY_IMPORT[from].length ? MAY_IMPORT[from].map((x) => x + '/').join(', ') : 'nothing of ours'} besides itself, not ${to}/`);
        continue;
      }
      const module = ONE_FACE_MODULES.find((m) => target.startsWith(m) && !f.path.startsWith(m));
      if (module && target !== `${module}index.ts`) add(`code outside ${module} imports it through ${module}index.ts only`);
      if (from === 'stages') {
        if (target.startsWith('pipeline/adapters/')) add('stages reach the outside world through ports/, never pipeline/adapters/');
        const own = stageFolderOf(f.path);
        const other = stageFolderOf(target);
        if (own === 'shared' && to === 'stages' && other !== 'shared') add('stages/shared/ imports no stage');
        else if (to === 'stages' && other !== null && other !== 'shared' && other !== own) add(`a stage folder imports only itself and stages/shared/, not stages/${other}/`);
      }
    }
  }
  return violations;
}

/** Every .ts file (declarations aside) under `folders` of `root`. */
function readSources(root: string, folders: readonly string[]): SourceFile[] {
  const out: SourceFile[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(root, dir))) {
      const rel = `${dir}/${name}`;
      if (statSync(path.join(root, rel)).isDirectory()) walk(rel);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push({ path: rel, text: readFileSync(path.join(root, rel), 'utf8') });
    }
  };
  for (const folder of folders) walk(folder);
  return out;
}

/** Every .ts file of the product folders under `root`. */
export const readProductSources = (root: string): SourceFile[] => readSources(root, PRODUCT_FOLDERS);

/**
 * bench/ and scripts/ run without the tests: they import product code and each other, never
 * test/. What they share with the tests (the in-memory context and KV store, output rows) lives
 * in bench/support/, which the tests import.
 */
const TOOL_FOLDERS: readonly string[] = ['bench', 'scripts'];

function toolViolations(f: SourceFile): Violation[] {
  const out: Violation[] = [];
  for (const spec of importsOf(f.text)) {
    if (!spec.startsWith('.')) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(f.path), spec));
    if (target.split('/')[0] === 'test') out.push({ file: f.path, imports: spec, rule: 'bench/ and scripts/ do not import test/: what they share with the tests lives in bench/support/' });
  }
  return out;
}

/** Every .ts file of bench/ and scripts/ under `root`. */
export const readToolSources = (root: string): SourceFile[] => readSources(root, TOOL_FOLDERS);
