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

/** A real S3-compatible server (s3rver) on a free loopback port with one empty bucket, its data in a temp dir. */
export async function startTestS3(bucket = 'crawl-test'): Promise<TestS3> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
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
