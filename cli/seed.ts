import { publishSeeds } from '../app/seeding.js';
import { SUBJECTS } from '../topology/index.js';
import { deniedPermission, joinCrawl } from './connection.js';
import { permissionDenialOf } from '../pipeline/adapters/nats-connection.js';
import { connectionPublisher } from '../pipeline/adapters/stream-access.js';
import { readSeeds } from './seeds-input.js';
import { UsageError } from './usage-error.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `crawl seed URL...` or URLs on stdin: publishes them on crawl.seeds of a running crawl. */
export async function seedCrawl(urls: string[], o: { out: string }): Promise<number> {
  let list = readSeeds(urls, undefined);
  if (urls.length === 0) {
    if (process.stdin.isTTY) throw new UsageError('no seeds: give URLs as arguments or one per line on stdin');
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const dir = mkdtempSync('/tmp/crawl-seeds-');
    try {
      writeFileSync(`${dir}/seeds.txt`, await readStdin());
      list = readSeeds([], `${dir}/seeds.txt`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  for (const r of list.rejected) process.stderr.write(`stdin line ${r.line}: skipped "${r.text}": ${r.reason}\n`);
  const nc = await joinCrawl(o.out, 'crawl seed');
  try {
    let seeded: Awaited<ReturnType<typeof publishSeeds>>;
    try {
      seeded = await publishSeeds(connectionPublisher(nc), list.urls);
    } catch (err) {
      // the refused publish may reject before the connection's status reports the denial
      const denied = deniedPermission(nc, SUBJECTS.seeds) ?? permissionDenialOf(err)?.message;
      throw new UsageError(denied ?? `publishing seeds: ${(err as Error).message}`);
    }
    if (seeded.scopeNotPut) {
      const why = deniedPermission(nc) ?? seeded.scopeNotPut.message;
      process.stderr.write(`the seeds' scope was not put first (${why}): seeds sent in different messages (over 1,000) may race each other's links\n`);
    }
  } finally {
    await nc.drain().catch(() => undefined);
  }
  process.stdout.write(`published ${list.urls.length} seed(s)\n`);
  return list.urls.length > 0 ? 0 : 2;
}
