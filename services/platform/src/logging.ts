import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { currentRequestId } from './http/request-id.js';

export type { Logger };

/**
 * Structured JSON logs on stdout; credentials are redacted wherever they appear in a logged request. A line written
 * while a request is served carries its `request_id` (http/request-id.ts).
 */
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
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-svc-identity"]', '*.secret', '*.password', '*.token', '*.key'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
