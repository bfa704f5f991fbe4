import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { NatsSecurity } from '../pipeline/adapters/nats-connection.js';
import { UsageError } from './usage-error.js';

/**
 * How every command that connects to NATS authenticates and checks the server: flags, else
 * the conventional environment variables. Secrets (password, token) are read from a file or
 * the environment only, never from a flag's value: a command line is visible to every user
 * of the machine in `ps` and is kept in shell history.
 */
export function addNatsOptions(cmd: Command): Command {
  return cmd
    .option('--nats-creds <file>', 'NATS credentials file: user JWT and NKey seed (env NATS_CREDS)')
    .option('--nats-nkey <file>', 'file holding an NKey user seed, SU... (env NATS_NKEY)')
    .option('--nats-user <user>', 'NATS user; its password from --nats-password-file or NATS_PASSWORD (env NATS_USER)')
    .option('--nats-password-file <file>', "file holding the NATS user's password (env NATS_PASSWORD holds the password itself)")
    .option('--nats-token-file <file>', 'file holding a NATS token (env NATS_TOKEN holds the token itself)')
    .option('--nats-ca <file>', "CA certificate (PEM) that signs the NATS server's; turns TLS on (env NATS_CA)")
    .option('--nats-cert <file>', 'TLS client certificate (PEM), with --nats-key, for servers that verify clients (env NATS_CERT)')
    .option('--nats-key <file>', "the TLS client certificate's private key (PEM) (env NATS_KEY)");
}

export interface NatsFlags {
  natsCreds?: string;
  natsNkey?: string;
  natsUser?: string;
  natsPasswordFile?: string;
  natsTokenFile?: string;
  natsCa?: string;
  natsCert?: string;
  natsKey?: string;
}

const env = (e: NodeJS.ProcessEnv, name: string) => {
  const v = e[name];
  return v !== undefined && v !== '' ? v : undefined;
};

function readSecret(file: string, flag: string): string {
  try {
    // a trailing newline is the editor's, not the secret's
    return readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new UsageError(`${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The flags, else the environment; a flag overrides its variable. */
export function natsSecurityFrom(o: NatsFlags, e: NodeJS.ProcessEnv = process.env): NatsSecurity {
  const s: NatsSecurity = {};
  const credsFile = o.natsCreds ?? env(e, 'NATS_CREDS');
  const nkeySeedFile = o.natsNkey ?? env(e, 'NATS_NKEY');
  const user = o.natsUser ?? env(e, 'NATS_USER');
  const password = o.natsPasswordFile !== undefined ? readSecret(o.natsPasswordFile, '--nats-password-file') : env(e, 'NATS_PASSWORD');
  const token = o.natsTokenFile !== undefined ? readSecret(o.natsTokenFile, '--nats-token-file') : env(e, 'NATS_TOKEN');
  const caFile = o.natsCa ?? env(e, 'NATS_CA');
  const certFile = o.natsCert ?? env(e, 'NATS_CERT');
  const keyFile = o.natsKey ?? env(e, 'NATS_KEY');
  // a flag names the one way to authenticate: the environment's others then do not apply
  const flagged = o.natsCreds ?? o.natsNkey ?? o.natsUser ?? o.natsTokenFile;
  if (flagged !== undefined) {
    if (o.natsCreds !== undefined) s.credsFile = credsFile;
    if (o.natsNkey !== undefined) s.nkeySeedFile = nkeySeedFile;
    if (o.natsUser !== undefined) Object.assign(s, { user, ...(password !== undefined ? { password } : {}) });
    if (o.natsTokenFile !== undefined) s.token = token;
  } else {
    if (credsFile !== undefined) s.credsFile = credsFile;
    if (nkeySeedFile !== undefined) s.nkeySeedFile = nkeySeedFile;
    if (user !== undefined) s.user = user;
    if (password !== undefined) s.password = password;
    if (token !== undefined) s.token = token;
  }
  if (caFile !== undefined) s.caFile = caFile;
  if (certFile !== undefined) s.certFile = certFile;
  if (keyFile !== undefined) s.keyFile = keyFile;
  return s;
}

let current: NatsSecurity = {};

/** Set once by main before a command's action runs, from that command's flags and the environment. */
export function useNatsSecurity(s: NatsSecurity): void {
  current = s;
}

/** What connections to NATS_URL use (the embedded server of `crawl run` needs none). */
export function natsSecurity(): NatsSecurity {
  return current;
}
