/**
 * DuckDB statements that let the views read an `s3://bucket/prefix` output through the
 * httpfs extension, from the usual AWS_* environment. `AWS_ENDPOINT_URL` points at an
 * S3-compatible server (MinIO, Ceph, R2…: path-style URLs, http or https as given).
 * The extension is loaded from the machine's extension cache; it is downloaded from DuckDB's
 * extension repository (`INSTALL httpfs`) only when asked (`install`), never behind the
 * user's back: DuckDB's own automatic install is switched off, so a query on a machine
 * without it fails at once with a message instead of reaching out to the internet.
 */
import { sqlString } from './sql-quote.js';


export function s3SetupStatements(env: NodeJS.ProcessEnv = process.env, opts: { install?: boolean } = {}): string[] {
  const secret: string[] = ['TYPE s3'];
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    secret.push(`KEY_ID ${sqlString(env.AWS_ACCESS_KEY_ID)}`, `SECRET ${sqlString(env.AWS_SECRET_ACCESS_KEY)}`);
    if (env.AWS_SESSION_TOKEN) secret.push(`SESSION_TOKEN ${sqlString(env.AWS_SESSION_TOKEN)}`);
  } else {
    // profiles, instance roles, SSO…: the AWS SDK's usual lookup
    secret.push('PROVIDER credential_chain');
  }
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  if (region) secret.push(`REGION ${sqlString(region)}`);
  const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  if (endpoint) {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new Error(`AWS_ENDPOINT_URL must be a URL such as http://127.0.0.1:9000, got "${endpoint}"`);
    }
    secret.push(`ENDPOINT ${sqlString(url.host)}`, `USE_SSL ${url.protocol === 'https:'}`, `URL_STYLE 'path'`);
  }
  return [
    'SET autoinstall_known_extensions = false',
    ...(opts.install ? ['INSTALL httpfs'] : []),
    'LOAD httpfs',
    `CREATE OR REPLACE SECRET crawl_output_s3 (${secret.join(', ')})`,
  ];
}
