import { existsSync } from 'node:fs';
import path from 'node:path';
import { WaczTooLargeError } from '../pipeline/adapters/export/wacz-zip.js';
import { resolveOut } from './output-location.js';
import { UsageError } from './usage-error.js';

export const EXPORT_FORMATS = ['wacz', 'wet', 'wat'] as const;
type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** `crawl export wacz|wet|wat --to FILE`: the crawl's archive in the formats replay tools and Common Crawl's users read. */
export async function runExport(format: string, o: { out: string; to?: string; host?: string }): Promise<number> {
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`crawl export: unknown format "${format}" (wacz, wet or wat)`);
  if (!o.to) throw new UsageError('crawl export: --to FILE is required (the file to write)');
  const outDir = resolveOut(o.out, 'export', false);
  if (!existsSync(outDir)) throw new UsageError(`no crawl output at ${outDir} (use --out DIR)`);
  const to = path.resolve(o.to);
  if (!existsSync(path.dirname(to))) throw new UsageError(`--to ${o.to}: the directory ${path.dirname(to)} does not exist`);
  try {
    switch (format as ExportFormat) {
      case 'wacz':
        return await (await import('./export-wacz.js')).exportWacz(outDir, to, o.host);
      case 'wet':
      case 'wat':
        return await (await import('./export-derivatives.js')).exportDerivative(format as 'wet' | 'wat', outDir, to, o.host);
    }
  } catch (err) {
    if (err instanceof WaczTooLargeError) throw new UsageError(err.message);
    throw err;
  }
}
