/**
 * node dist/scripts/write-accounts-conf.js — writes ops/nats/accounts.conf from
 * ops/nats/permissions.ts (after a change to a role's subjects; a unit test compares them).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ACCOUNTS_CONF_HEADER, accountsConfig, passwordVariable } from '../ops/nats/permissions.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const file = path.join(root, 'ops/nats/accounts.conf');
writeFileSync(file, ACCOUNTS_CONF_HEADER + accountsConfig((role) => `password: $${passwordVariable(role)}`));
process.stdout.write(`wrote ${file}\n`);
