import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { currentRequestId } from './request-id.js';

export type { Logger };

/** What failed and where, never with what data. */
const KEPT_FIELDS = ['code', 'severity', 'routine', 'constraint', 'table', 'column', 'schema', 'dataType', 'kind', 'statusCode'] as const;
const QUOTED = /"[^"]*"|'[^']*'/g;
const STATEMENT = /^\s*(?:select|insert|update|delete|with|merge)\b/i;

/**
 * Postgres and driver errors echo what a request sent: those parts are dropped or redacted, so no personal data
 * reaches the log; code, routine, table and constraint stay.
 */
export function loggedError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const source = err as Error & Record<string, unknown>;
  let message = err.message;
  if (STATEMENT.test(message) && message.includes(' - ')) message = message.slice(message.lastIndexOf(' - ') + 3);
  const fromDatabase = typeof source.code === 'string' && (typeof source.severity === 'string' || typeof source.routine === 'string');
  if (fromDatabase || message !== err.message) message = message.replace(QUOTED, (q) => `${q[0]}[redacted]${q[0]}`);
  const frames = (err.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  const out: Record<string, unknown> = {
    type: err.constructor?.name ?? err.name,
    message,
    stack: [`${err.name}: ${message}`, ...frames].join('\n'),
  };
  for (const field of KEPT_FIELDS) {
    const value = source[field];
    if (typeof value === 'string' || typeof value === 'number') out[field] = value;
  }
  if (err.cause !== undefined) out.cause = loggedError(err.cause);
  return out;
}

/** Credentials are redacted; lines written while a request is served carry its `request_id`. */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: () => {
      const id = currentRequestId();
      return id === undefined ? {} : { request_id: id };
    },
    serializers: { err: loggedError, error: loggedError },
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-svc-identity"]', '*.secret', '*.password', '*.token', '*.key'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
