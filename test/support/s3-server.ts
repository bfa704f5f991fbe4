import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface TestS3 {
  /** http://127.0.0.1:port */
  endpoint: string;
  bucket: string;
  /** the environment the crawler reads its S3 settings from */
  env: Record<string, string>;
  close(): Promise<void>;
}

type PutObject = (object: { content: unknown }) => Promise<unknown>;

/** The request's body, once it has all come; rejected if the upload ends before it has. */
function wholeBody(req: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      ended = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
    req.on('close', () => {
      if (!ended) reject(new Error('upload ended before its body did'));
    });
  });
}

/**
 * S3 makes an object visible only whole: a PUT whose client dies midway stores nothing.
 * s3rver writes the object at its key as the upload streams in, so a crawl SIGKILLed during an
 * upload (object-storage.test.ts kills one) left a partial object in the listing, which the
 * resumed crawl's compaction then failed to read. Here s3rver stores an object only once its
 * whole body has arrived, as S3 does.
 */
function receiveObjectsWhole(server: S3rver): void {
  const store = (server as unknown as { store: { putObject: PutObject } }).store;
  const put = store.putObject.bind(store);
  store.putObject = async (object) => {
    if (!Buffer.isBuffer(object.content)) object.content = await wholeBody(object.content as NodeJS.ReadableStream);
    return put(object);
  };
}

/** A real S3-compatible server (s3rver) on a free loopback port with one empty bucket, its data in a temp dir. */
export async function startTestS3(bucket = 'crawl-test'): Promise<TestS3> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  receiveObjectsWhole(server);
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    // s3rver's fixed credentials
    env: { AWS_ENDPOINT_URL: endpoint, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
