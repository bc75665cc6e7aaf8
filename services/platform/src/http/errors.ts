import { ZodError } from 'zod';
import {
  AppError,
  type FieldError,
  invalidFields,
  isNumberOutOfRange,
  isStoreUnavailable,
  numberOutOfRange,
  unavailable,
} from '../errors.js';
import type { Logger } from '../logging.js';
import { malformedPath } from './body.js';

/**
 * One 400 naming every offending field (decision 0141). An unknown member is listed under its own path, while
 * `message` says it of the object holding it.
 */
export function zodToInvalid(error: ZodError, part: 'body' | 'query' = 'body'): AppError {
  const named = (path: readonly PropertyKey[]) => (path.length ? path.join('.') : part);
  const message = error.issues.map((issue) => `${named(issue.path)}: ${issue.message}`).join('; ');
  const fields = error.issues.flatMap((issue): FieldError[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: [...issue.path, key].join('.'), message: 'Unrecognized key' }))
      : [{ field: named(issue.path), message: issue.message }],
  );
  return invalidFields(fields, message);
}

/** What is not ours is logged and becomes a 500. */
export function toAppError(err: unknown, logger: Logger, where: { method?: string; path?: string }): AppError {
  if (err instanceof AppError) {
    // Addresses a peer named are for the log only.
    if (err.details?.cause)
      logger.warn({ err: err.details.cause, kind: err.kind, method: where.method, path: where.path }, 'upstream failed');
    return err;
  }
  if (err instanceof ZodError) return zodToInvalid(err);
  if (err instanceof URIError) return malformedPath();
  if (isNumberOutOfRange(err)) {
    logger.warn({ err, method: where.method, path: where.path }, 'a number beyond its column reached the store');
    return numberOutOfRange();
  }
  if (isStoreUnavailable(err)) {
    logger.warn({ err, method: where.method, path: where.path }, 'a dependency is unavailable');
    return unavailable('The service is temporarily unavailable; retry later');
  }
  logger.error({ err, method: where.method, path: where.path }, 'unhandled error');
  return new AppError('internal', 'Internal server error');
}
