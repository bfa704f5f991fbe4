import { existsSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openOutputDatabase } from '../pipeline/adapters/duckdb-views.js';
import { sqlString } from '../pipeline/adapters/sql-quote.js';
import { mergeCdxjFiles } from '../pipeline/adapters/export/cdxj-merge.js';
import { copyHostRecords } from '../pipeline/adapters/export/host-records.js';
import { writeWacz, type WaczEntry } from '../pipeline/adapters/export/wacz-zip.js';
import { cdxjPathOf, reindexWarcFile, writeCdxjFile } from '../pipeline/adapters/warc/cdxj-file.js';
import { OPEN_SUFFIX } from '../pipeline/adapters/warc/file-sink.js';
import { repairAbandonedWarcs } from '../pipeline/adapters/warc/repair.js';
import { UsageError } from './usage-error.js';

export const EXPORT_SOFTWARE = 'jetstream-crawler/0.1 (crawl export)';

/** The sealed WARC files of an output (a dead writer's files sealed first; a file still written is left out). */
export async function sealedWarcFiles(outDir: string): Promise<string[]> {
  const dir = path.join(outDir, 'warc');
  if (!existsSync(dir)) throw new UsageError(`no WARC files in ${outDir} (no warc/ directory; use --out DIR)`);
  await repairAbandonedWarcs(dir);
  const names = await fsp.readdir(dir);
  const open = new Set(names.filter((n) => n.endsWith(OPEN_SUFFIX)).map((n) => n.slice(0, -OPEN_SUFFIX.length)));
  const files = names.filter((n) => n.endsWith('.warc.gz') && !open.has(n)).sort();
  if (open.size > 0) process.stderr.write(`crawl export: ${open.size} WARC file(s) still being written are left out (their writer indexes and seals them)\n`);
  return files.map((n) => path.join(dir, n));
}

interface PageLine {
  id: string;
  url: string;
  ts: string;
  title?: string;
  text?: string;
}

/**
 * The crawl's pages (2xx, what replay shows) as WACZ page entries, oldest first; of one host
 * with `host`. Only pages whose record is in the package (`files`, as captures names them):
 * a page whose WARC file is still being written is not listed, since it would not replay.
 */
async function pagesOf(outDir: string, host: string | undefined, files: readonly string[]): Promise<PageLine[]> {
  const db = await openOutputDatabase(outDir);
  try {
    const where = `p.fetch_status BETWEEN 200 AND 299${host ? ` AND p.url_host_name = ${sqlString(host.toLowerCase())}` : ''}`;
    const packaged = `EXISTS (SELECT 1 FROM captures c WHERE c.fetch_id = p.fetch_id AND c.warc_type IN ('response', 'revisit') AND c.warc_filename IN (${files.map(sqlString).join(', ')}))`;
    const res = await db.run(
      `SELECT p.fetch_id, p.url, strftime(p.fetch_time, '%Y-%m-%dT%H:%M:%SZ') AS ts, p.title, p.text FROM pages p WHERE ${where} AND ${packaged} ORDER BY p.fetch_time, p.url`,
    );
    return res.rows.map(([id, url, ts, title, text]) => ({
      id: String(id),
      url: String(url),
      ts: String(ts),
      ...(title ? { title: String(title) } : {}),
      ...(text ? { text: String(text) } : {}),
    }));
  } catch (err) {
    // an output without a pages table yet (only WARC files): the package has an empty page list
    if (/does not exist|not found/i.test((err as Error).message)) return [];
    throw err;
  } finally {
    await db.close();
  }
}

/**
 * `crawl export wacz --to FILE.wacz [--host H]`: the crawl's WARC files (or the records of
 * one host, copied out of them), their CDXJ index merged into one, and its pages, packaged as
 * WACZ 1.1.1 for ReplayWeb.page, pywb or any WACZ reader.
 */
export async function exportWacz(outDir: string, to: string, host: string | undefined): Promise<number> {
  const started = Date.now();
  const warcs = await sealedWarcFiles(outDir);
  const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'crawl-wacz-'));
  try {
    const archive: WaczEntry[] = [];
    const indexes: string[] = [];
    for (const file of warcs) {
      if (host) {
        const copy = path.join(work, path.basename(file));
        const lines = await copyHostRecords(file, copy, host);
        if (lines === null) continue;
        const index = cdxjPathOf(copy);
        await writeCdxjFile(index, lines);
        indexes.push(index);
        archive.push({ path: `archive/${path.basename(file)}`, file: copy, deflate: false });
      } else {
        // the archive writes each file's index as it seals it; rebuilt here if it went missing
        if (!existsSync(cdxjPathOf(file))) await reindexWarcFile(file);
        indexes.push(cdxjPathOf(file));
        archive.push({ path: `archive/${path.basename(file)}`, file, deflate: false });
      }
    }
    if (archive.length === 0) throw new UsageError(host ? `no records of ${host} in the WARC files of ${outDir}` : `no sealed WARC files in ${outDir}`);
    const index = path.join(work, 'index.cdxj');
    const lines = await mergeCdxjFiles(indexes, index);
    const pages = await pagesOf(outDir, host, archive.map((a) => `warc/${path.basename(a.path)}`));
    const pagesFile = path.join(work, 'pages.jsonl');
    const header = { format: 'json-pages-1.0', id: 'pages', title: 'All Pages' };
    await fsp.writeFile(pagesFile, [header, ...pages].map((p) => JSON.stringify(p)).join('\n') + '\n');
    const main = pages[0];
    const bytes = await writeWacz(
      to,
      [...archive, { path: 'indexes/index.cdxj', file: index, deflate: true }, { path: 'pages/pages.jsonl', file: pagesFile, deflate: true }],
      {
        title: host ? `Crawl of ${host}` : `Crawl ${path.basename(outDir)}`,
        software: EXPORT_SOFTWARE,
        ...(main ? { mainPageUrl: main.url, mainPageDate: main.ts } : {}),
      },
    );
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(`wrote ${to}: ${archive.length} WARC file${archive.length === 1 ? '' : 's'}, ${lines} index lines, ${pages.length} pages, ${(bytes / 1e6).toFixed(1)} MB (${secs} s)\n`);
    return 0;
  } finally {
    await fsp.rm(work, { recursive: true, force: true });
  }
}
