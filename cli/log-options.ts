/** `--log-level` and `--log-file` as commander hands them over (see addLogOptions in main.ts). */
export interface LogOptions {
  logLevel?: string;
  logFile?: string;
}
