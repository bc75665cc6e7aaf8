import { ZodError } from 'zod';
import { AppError, invalid } from '../errors.js';
import type { Logger } from '../logging.js';

/** Zod issues become one 400 whose message names every offending field. */
export function zodToInvalid(error: ZodError): AppError {
  const parts = error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.join('.') : 'body';
    return `${path}: ${issue.message}`;
  });
  return invalid(parts.join('; '), { fields: error.issues.map((i) => i.path.join('.')) });
}

/** Any error of a request as one of the closed set; what is not ours is logged and becomes a 500. */
export function toAppError(err: unknown, logger: Logger, where: { method?: string; path?: string }): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError) return zodToInvalid(err);
  if (err && typeof err === 'object' && 'type' in err && err.type === 'entity.parse.failed') return invalid('body: malformed JSON');
  if (err && typeof err === 'object' && 'type' in err && err.type === 'entity.too.large') return invalid('body: too large');
  logger.error({ err, method: where.method, path: where.path }, 'unhandled error');
  return new AppError('internal', 'Internal server error');
}
