/**
 * WARC files in an object store (the WARC sink port, ports/warc-sink.ts). An object cannot be
 * appended to, and must never be seen half-written, so each batch's exchanges are written to a
 * local WARC file (a spool) and,
 * when the batch is made durable (`sync`, before its `captures` rows are written and its
 * messages acked), that file is sealed and uploaded whole as `warc/<name>`; the next batch
 * starts a new file. A `captures` row therefore only ever points into an object that is
 * complete. The spool holds nothing that was acked: a process that dies loses only what is
 * redelivered anyway.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { ObjectStore } from '../../../ports/object-store.js';
import type { BuildMembers, WarcAppended, WarcMembers, WarcSink } from '../../../ports/warc-sink.js';
import { OPEN_SUFFIX, WarcFileSink, type WarcFilesOptions } from './file-sink.js';
import { cdxjPathOf } from './cdxj-file.js';

export class UploadedWarcSink implements WarcSink {
  private readonly local: WarcFileSink;

  constructor(
    private readonly spoolDir: string,
    opts: WarcFilesOptions,
    private readonly store: ObjectStore,
  ) {
    this.local = new WarcFileSink(spoolDir, opts);
  }

  append<T extends WarcMembers>(build: BuildMembers<T>): Promise<WarcAppended<T>> {
    return this.local.append(build);
  }

  async sync(): Promise<void> {
    // sealing takes its turn after the appends made so far; later ones open the next file
    await this.local.close();
    await this.uploadSealed();
  }

  async close(): Promise<void> {
    await this.sync();
    await fsp.rm(this.spoolDir, { recursive: true, force: true });
  }

  /**
   * Every spooled file that is sealed (no `.open` marker), uploaded under `warc/` and removed;
   * its CDXJ index after it, so an index object never names a WARC object not there yet.
   */
  private async uploadSealed(): Promise<void> {
    const dir = this.local.dir;
    const names = await fsp.readdir(dir).catch(() => [] as string[]);
    const open = new Set(names.filter((n) => n.endsWith(OPEN_SUFFIX)).map((n) => n.slice(0, -OPEN_SUFFIX.length)));
    for (const name of names.filter((n) => n.endsWith('.warc.gz') && !open.has(n)).sort()) {
      const index = cdxjPathOf(name);
      await this.store.putFile(`warc/${name}`, path.join(dir, name));
      await this.store.putFile(`warc/${index}`, path.join(dir, index));
      await fsp.rm(path.join(dir, name), { force: true });
      await fsp.rm(path.join(dir, index), { force: true });
    }
  }
}
