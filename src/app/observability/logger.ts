// Structured logs: one JSON object per line on stdout, `{ time, level, message, ...fields }`, with the
// pass id and function name bound by `child`. Written with `process.stdout.write` rather than
// console.log, so that Lambda's text log format does not prefix the line and CloudWatch Logs Insights
// reads the fields as they are.
import type { LogLevel } from '../config.ts';

/** Where a finished line goes (a newline is added by the sink). Tests capture lines with their own. */
export type LineSink = (line: string) => void;

export const stdoutSink: LineSink = (line) => {
  process.stdout.write(`${line}\n`);
};

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Readonly<Record<string, unknown>>;

export class Logger {
  constructor(
    private readonly sink: LineSink = stdoutSink,
    private readonly level: LogLevel = 'info',
    private readonly bound: LogFields = {},
    private readonly clock: () => number = Date.now,
  ) {}

  /** A logger that adds `fields` to every line (e.g. `{ passId, function }`). */
  child(fields: LogFields): Logger {
    return new Logger(this.sink, this.level, { ...this.bound, ...fields }, this.clock);
  }

  debug(message: string, fields?: LogFields): void {
    this.write('debug', message, fields);
  }
  info(message: string, fields?: LogFields): void {
    this.write('info', message, fields);
  }
  warn(message: string, fields?: LogFields): void {
    this.write('warn', message, fields);
  }
  error(message: string, fields?: LogFields): void {
    this.write('error', message, fields);
  }

  private write(level: LogLevel, message: string, fields?: LogFields): void {
    if (RANK[level] < RANK[this.level]) return;
    const record = { time: new Date(this.clock()).toISOString(), level, message, ...this.bound, ...fields };
    this.sink(JSON.stringify(record, replacer));
  }
}

/** Errors as `{ name, message, stack, cause }` (JSON.stringify drops an Error's own fields otherwise). */
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const extra = Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'cause'));
    return {
      name: value.name,
      message: value.message,
      ...extra,
      ...(value.stack === undefined ? {} : { stack: value.stack }),
      ...(value.cause === undefined ? {} : { cause: value.cause }),
    };
  }
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  if (typeof value === 'bigint') return value.toString();
  return value;
}
