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
 * Zod issues become one 400 naming every offending field, in `message` and in `details.fields` (decision 0141);
 * `part` names the whole value. A member the schema does not know is listed in `details.fields` under its own path
 * (`extra`, `person.nickname`), where `message` says it of the object holding it (`body: Unrecognized key: "extra"`).
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
