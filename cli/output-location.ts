import path from 'node:path';
import { isRemoteOutput } from '../pipeline/adapters/output-layout.js';
import { parseS3Url } from '../pipeline/adapters/s3-store.js';
import { UsageError } from './usage-error.js';

/**
 * `--out` as the commands use it: a local directory (made absolute) or `s3://bucket/prefix`
 * for the commands that write to or read from an object store (run, worker, seed, compact,
 * sql); any other URL, or an s3:// one for a command that reads local files, is a usage error.
 */
export function resolveOut(out: string, command: string, remoteAllowed: boolean): string {
  if (!isRemoteOutput(out)) return path.resolve(out);
  if (!/^s3:\/\//i.test(out)) throw new UsageError(`--out must be a directory or an s3://bucket/prefix URL, got "${out}"`);
  if (!remoteAllowed) throw new UsageError(`crawl ${command} works on a local output directory, not ${out} (copy it locally first, e.g. aws s3 sync)`);
  try {
    const { bucket, prefix } = parseS3Url(out);
    return `s3://${bucket}${prefix ? `/${prefix}` : ''}`;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Where the embedded nats-server keeps its store for an output: inside a local output
 * directory; for an s3:// output, under ./crawl-state/<bucket>/<prefix>/ (a JetStream store
 * needs a local disk), so the same command in the same directory resumes.
 */
export function embeddedStateDir(outDir: string): string {
  if (!isRemoteOutput(outDir)) return path.join(outDir, 'nats');
  const { bucket, prefix } = parseS3Url(outDir);
  return path.resolve('crawl-state', bucket, ...prefix.split('/').filter(Boolean), 'nats');
}
