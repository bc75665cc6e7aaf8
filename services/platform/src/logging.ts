import { type Logger, pino } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; credentials are redacted wherever they appear in a logged request. */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-svc-identity"]', '*.secret', '*.password', '*.token', '*.key'],
      censor: '[redacted]',
    },
  });
}
