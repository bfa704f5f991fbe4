import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { CDXJ_SUFFIX, cdxjPathOf, reindexWarcFile } from '../pipeline/adapters/warc/cdxj-file.js';
import { OPEN_SUFFIX } from '../pipeline/adapters/warc/file-sink.js';
import { repairAbandonedWarcs } from '../pipeline/adapters/warc/repair.js';
import { resolveOut } from './output-location.js';
import { UsageError } from './usage-error.js';

/**
 * `crawl index`: rebuilds the CDXJ index (`warc/<name>.cdxj`) of every sealed WARC file of an
 * output from the file itself. The archive writes these as it seals each file; this is for
 * files from elsewhere, an index lost or deleted, or a fix to how entries are made. Files a
 * dead writer left open on this host are sealed first, as an archive process does on start;
 * a file still being written is left alone (its writer indexes it when it seals it).
 */
export async function runIndex(o: { out: string; missing?: boolean }): Promise<number> {
  const outDir = resolveOut(o.out, 'index', false);
  const dir = path.join(outDir, 'warc');
  if (!existsSync(dir)) throw new UsageError(`no WARC files in ${outDir} (no warc/ directory; use --out DIR)`);
  const started = Date.now();
  for (const r of await repairAbandonedWarcs(dir)) process.stderr.write(`sealed ${path.basename(r.file)}, whose writer died (${r.cutBytes} bytes of a torn record cut)\n`);
  const names = await fsp.readdir(dir);
  const open = new Set(names.filter((n) => n.endsWith(OPEN_SUFFIX)).map((n) => n.slice(0, -OPEN_SUFFIX.length)));
  const present = new Set(names.filter((n) => n.endsWith(CDXJ_SUFFIX)));
  let files = 0;
  let records = 0;
  let lines = 0;
  let skipped = 0;
  for (const name of names.filter((n) => n.endsWith('.warc.gz')).sort()) {
    if (open.has(name)) {
      skipped++;
      continue;
    }
    if (o.missing && present.has(path.basename(cdxjPathOf(name)))) continue;
    const index = await reindexWarcFile(path.join(dir, name));
    files++;
    records += index.records;
    lines += index.lines.length;
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  process.stdout.write(`indexed ${files} WARC file${files === 1 ? '' : 's'}: ${records} records, ${lines} index lines in warc/*${CDXJ_SUFFIX} (${secs} s)${skipped ? `; ${skipped} still being written, left to their writer` : ''}\n`);
  return 0;
}
