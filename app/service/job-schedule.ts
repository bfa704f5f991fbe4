import { CronExpressionParser } from 'cron-parser';
import { durationMs, type JobSchedule } from '../../schemas/index.js';

/** Why a cron expression does not parse, or null when it does (5 fields, or 6 with seconds; UTC). */
export function cronProblem(cron: string): string | null {
  try {
    CronExpressionParser.parse(cron, { tz: 'UTC' });
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** When a job with this schedule runs next after a run at `after` (epoch ms); null: never again. */
export function nextRunAfter(schedule: JobSchedule, after: number): number | null {
  switch (schedule.kind) {
    case 'once':
      return null;
    case 'interval':
      return after + durationMs(schedule.every);
    case 'cron':
      return CronExpressionParser.parse(schedule.cron, { currentDate: new Date(after), tz: 'UTC' }).next().getTime();
  }
}
