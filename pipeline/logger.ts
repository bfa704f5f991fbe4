import { pino } from 'pino';

export type Logger = pino.Logger;

/** JSON logs on stderr (stdout is for command output). LOG_LEVEL overrides the level. */
export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination({ dest: 2, sync: false }));
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
