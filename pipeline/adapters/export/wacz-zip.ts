/**
 * A WACZ file (Webrecorder's WACZ 1.1.1: the package Browsertrix writes and ReplayWeb.page
 * opens): a ZIP of `archive/*.warc.gz`, `indexes/index.cdxj`, `pages/pages.jsonl`, and a
 * `datapackage.json` listing every file with its size and sha256, plus
 * `datapackage-digest.json`, the hash of that manifest. The WARC files are STOREd (the spec:
 * already compressed data is not compressed again, so a reader can range-request a record);
 * the text files are deflated. Each file is hashed as it is copied into the ZIP, so the
 * WARC files are read once. The ZIP is written under a temporary name and renamed, so a
 * failed export never leaves a partial `.wacz` behind.
 *
 * fflate writes no ZIP64, so a package is limited to 4 GiB and 65,535 files: a larger crawl
 * is exported a host at a time (`--host`), and the limit is checked before anything is written.
 */
import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import { Zip, ZipDeflate, ZipPassThrough } from 'fflate';

export const WACZ_VERSION = '1.1.1';
/** ZIP's 32-bit sizes and offsets; the headers and manifest need a little room besides */
const ZIP32_LIMIT = 0xffff_ffff - 64 * 1024 * 1024;

export interface WaczEntry {
  /** path inside the package: `archive/x.warc.gz` */
  path: string;
  /** the local file */
  file: string;
  /** deflate it (text) or store it (already compressed) */
  deflate: boolean;
}

export interface WaczMeta {
  title: string;
  description?: string;
  software: string;
  mainPageUrl?: string;
  mainPageDate?: string;
}

interface Resource {
  name: string;
  path: string;
  hash: string;
  bytes: number;
}

export class WaczTooLargeError extends Error {
  override name = 'WaczTooLargeError';
}

/** Writes the package to `to`; returns its size. */
export async function writeWacz(to: string, entries: readonly WaczEntry[], meta: WaczMeta): Promise<number> {
  let total = 0;
  for (const e of entries) total += (await fsp.stat(e.file)).size;
  if (total > ZIP32_LIMIT || entries.length > 65_000) {
    throw new WaczTooLargeError(`a WACZ of ${entries.length} files and ${(total / 2 ** 30).toFixed(1)} GiB is past what a ZIP without ZIP64 holds (4 GiB, 65,535 files): export a host at a time with --host`);
  }
  const tmp = `${to}.tmp-${process.pid}`;
  const fh = await fsp.open(tmp, 'w');
  let size = 0;
  // fflate hands chunks over synchronously; they are written in order, one at a time
  let writing: Promise<unknown> = Promise.resolve();
  let failed: Error | null = null;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const zip = new Zip((err, chunk, final) => {
    if (err) failed ??= err;
    writing = writing.then(async () => {
      await fh.write(chunk);
      size += chunk.length;
    });
    writing.catch((e: Error) => (failed ??= e));
    if (final) done();
  });
  const mtime = new Date();
  try {
    const resources: Resource[] = [];
    for (const e of entries) {
      const stream = e.deflate ? new ZipDeflate(e.path, { level: 6 }) : new ZipPassThrough(e.path);
      stream.mtime = mtime;
      zip.add(stream);
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const chunk of createReadStream(e.file, { highWaterMark: 1 << 20 })) {
        const b = chunk as Buffer;
        hash.update(b);
        bytes += b.length;
        stream.push(b);
        await writing; // bounded: what was handed over is written before the next chunk is read
        if (failed) throw failed;
      }
      stream.push(new Uint8Array(0), true);
      resources.push({ name: e.path.slice(e.path.lastIndexOf('/') + 1), path: e.path, hash: `sha256:${hash.digest('hex')}`, bytes });
    }
    const datapackage = Buffer.from(
      JSON.stringify(
        {
          profile: 'data-package',
          wacz_version: WACZ_VERSION,
          title: meta.title,
          ...(meta.description ? { description: meta.description } : {}),
          created: mtime.toISOString(),
          modified: mtime.toISOString(),
          software: meta.software,
          ...(meta.mainPageUrl ? { mainPageUrl: meta.mainPageUrl } : {}),
          ...(meta.mainPageDate ? { mainPageDate: meta.mainPageDate } : {}),
          resources,
        },
        null,
        2,
      ),
    );
    const digest = Buffer.from(JSON.stringify({ path: 'datapackage.json', hash: `sha256:${createHash('sha256').update(datapackage).digest('hex')}` }, null, 2));
    for (const [name, data] of [['datapackage.json', datapackage], ['datapackage-digest.json', digest]] as const) {
      const f = new ZipDeflate(name, { level: 6 });
      f.mtime = mtime;
      zip.add(f);
      f.push(data, true);
    }
    zip.end();
    await finished;
    await writing;
    if (failed) throw failed;
    await fh.sync();
    await fh.close();
    await fsp.rename(tmp, to);
    return size;
  } catch (err) {
    zip.terminate();
    await writing.catch(() => undefined);
    await fh.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}
