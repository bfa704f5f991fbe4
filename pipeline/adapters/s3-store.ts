/**
 * The object store over an S3-compatible service (AWS S3, MinIO, Ceph, R2, s3rver) through
 * the AWS SDK, configured the way every S3 tool is: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
 * (or the SDK's usual credential chain), AWS_REGION, and AWS_ENDPOINT_URL(_S3) for a service
 * other than AWS (path-style URLs then, as most of them want).
 */
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { ObjectStore, StoredObject } from '../../ports/object-store.js';

/** `s3://bucket/some/prefix` -> bucket and prefix (no slashes at its ends). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/i.exec(url.trim());
  if (!m) throw new Error(`not an S3 URL: "${url}" (expected s3://bucket/prefix)`);
  return { bucket: m[1]!, prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

type S3Module = typeof import('@aws-sdk/client-s3');
let sdk: Promise<S3Module> | undefined;

/**
 * The SDK is loaded only for an s3:// output. Its notice that releases after January 2027
 * will need Node 22 is about future versions, not this one (the lock file pins it), and
 * would print on every command: it is switched off unless the user set the variable.
 */
function loadSdk(): Promise<S3Module> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  sdk ??= import('@aws-sdk/client-s3');
  return sdk;
}

export async function openS3Store(url: string, env: NodeJS.ProcessEnv = process.env): Promise<ObjectStore> {
  const { bucket, prefix } = parseS3Url(url);
  const s3 = await loadSdk();
  const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  const client = new s3.S3Client({
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    // keys given in `env` win; otherwise the SDK's chain (environment, profiles, instance roles)
    ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? { credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } }
      : {}),
    // checksums only where S3 requires them: several S3-compatible servers do not read the
    // streaming checksum trailer the SDK otherwise sends, and would store it in the object
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const full = (key: string) => (prefix ? `${prefix}/${key}` : key);
  const base = `s3://${bucket}${prefix ? `/${prefix}` : ''}`;
  const what = (op: string, key: string, err: unknown) => new Error(`${op} ${base}/${key}: ${(err as Error).message}`, { cause: err });
  return {
    url: base,
    urlOf: (key) => `${base}/${key}`,
    async putFile(key, localPath) {
      const { size } = await fsp.stat(localPath);
      try {
        await client.send(new s3.PutObjectCommand({ Bucket: bucket, Key: full(key), Body: createReadStream(localPath), ContentLength: size }));
      } catch (err) {
        throw what('uploading', key, err);
      }
    },
    async *list(under) {
      let token: string | undefined;
      do {
        const page = await client.send(new s3.ListObjectsV2Command({ Bucket: bucket, Prefix: full(under), ContinuationToken: token })).catch((err: unknown) => {
          throw what('listing', under, err);
        });
        for (const o of page.Contents ?? []) {
          const key = prefix ? o.Key!.slice(prefix.length + 1) : o.Key!;
          yield { key, size: o.Size ?? 0, lastModified: o.LastModified?.getTime() ?? 0 } satisfies StoredObject;
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
    async downloadFile(key, localPath) {
      try {
        const res = await client.send(new s3.GetObjectCommand({ Bucket: bucket, Key: full(key) }));
        await pipeline(res.Body as Readable, createWriteStream(localPath));
      } catch (err) {
        throw what('downloading', key, err);
      }
    },
    async readRange(key, offset, length) {
      try {
        const res = await client.send(new s3.GetObjectCommand({ Bucket: bucket, Key: full(key), Range: `bytes=${offset}-${offset + length - 1}` }));
        return await res.Body!.transformToByteArray();
      } catch (err) {
        throw what('reading', key, err);
      }
    },
    async delete(keys) {
      // DeleteObjects takes at most 1,000 keys a request
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000).map((k) => ({ Key: full(k) }));
        const res = await client.send(new s3.DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch, Quiet: true } }));
        if (res.Errors?.length) throw new Error(`deleting from ${base}: ${res.Errors[0]!.Key}: ${res.Errors[0]!.Message}`);
      }
    },
  };
}
