import { ZodError } from 'zod';
import { AppError, invalid, isStoreUnavailable, unavailable } from '../errors.js';
import type { Logger } from '../logging.js';
import { MALFORMED_PATH } from './body.js';

/** Zod issues become one 400 whose message names every offending field; `part` names the whole value. */
export function zodToInvalid(error: ZodError, part: 'body' | 'query' = 'body'): AppError {
  const parts = error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.join('.') : part;
    return `${path}: ${issue.message}`;
  });
  return invalid(parts.join('; '), { fields: error.issues.map((i) => i.path.join('.')) });
}

/** Any error of a request as one of the closed set; what is not ours is logged and becomes a 500. */
export function toAppError(err: unknown, logger: Logger, where: { method?: string; path?: string }): AppError {
  if (err instanceof AppError) {
    // A peer's transport failure answers a fixed message; what it said (addresses) is for the log only.
    if (err.details?.cause)
      logger.warn({ err: err.details.cause, kind: err.kind, method: where.method, path: where.path }, 'upstream failed');
    return err;
  }
  if (err instanceof ZodError) return zodToInvalid(err);
  // Express' router fails to decode a path parameter such as `%ud800` with a URIError.
  if (err instanceof URIError) return invalid(MALFORMED_PATH);
  if (isStoreUnavailable(err)) {
    logger.warn({ err, method: where.method, path: where.path }, 'a dependency is unavailable');
    return unavailable('The service is temporarily unavailable; retry later');
  }
  logger.error({ err, method: where.method, path: where.path }, 'unhandled error');
  return new AppError('internal', 'Internal server error');
}
