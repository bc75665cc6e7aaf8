import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The closed set of failures every service may report. Domain code throws these; each transport maps
 * them exactly once (HTTP in http/errors.ts, gRPC in grpc/server.ts).
 */
export type ErrorKind =
  | 'invalid'
  | 'too_large'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'gone'
  | 'rate_limited'
  | 'unavailable'
  | 'internal'
  // What HTTP refuses before any route runs (decision 0110): a body of the wrong media type, or too slow.
  | 'unsupported_media_type'
  | 'request_timeout'
  // The request line and headers did not fit the HTTP parser's limit (the gateway's clientError, decision 0122).
  | 'headers_too_large';

export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** A field a validation error names: its path (`title`, `persons.0.name`, `body`, `query`) and what is wrong. */
export interface FieldError {
  field: string;
  message: string;
}

/** `tags[0].id` as the dotted path the field lists use (`tags.0.id`), as zod's issues are named. */
const dotted = (field: string) => field.replace(/\[(\d+)\]/g, '.$1');

/**
 * Every 400 (decision 0141): `message` names each field (`title: must be …; stage_id: …`), and the
 * body's `details.fields` lists them for a machine, validation and business rules alike; there is no 400 without
 * its fields. `message` may be given when its wording is not `field: text` (a provider's refusal); `extra` details
 * are for the log only.
 */
export const invalidFields = (
  fields: FieldError[],
  message = fields.map((f) => `${f.field}: ${f.message}`).join('; '),
  extra?: Record<string, unknown>,
) => new AppError('invalid', message, { ...extra, fields: fields.map((f) => ({ field: dotted(f.field), message: f.message })) });
/** The 400 of one field: `field: message`. */
export const invalidField = (field: string, message: string) => invalidFields([{ field, message }]);
/** A body over a documented size limit (413), found while it streams. */
export const tooLarge = (message: string) => new AppError('too_large', message);
export const unauthorized = (message = 'Unauthorized') => new AppError('unauthorized', message);
export const forbidden = (message = 'Forbidden') => new AppError('forbidden', message);
export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const conflict = (message: string) => new AppError('conflict', message);
/** Something that existed and is over for good (an expired satisfaction link). */
export const gone = (message: string) => new AppError('gone', message);
export const unavailable = (message: string) => new AppError('unavailable', message);

const httpOf: Record<ErrorKind, { statusCode: number; error: string }> = {
  invalid: { statusCode: 400, error: 'Bad Request' },
  too_large: { statusCode: 413, error: 'Payload Too Large' },
  unauthorized: { statusCode: 401, error: 'Unauthorized' },
  forbidden: { statusCode: 403, error: 'Forbidden' },
  not_found: { statusCode: 404, error: 'Not Found' },
  conflict: { statusCode: 409, error: 'Conflict' },
  gone: { statusCode: 410, error: 'Gone' },
  rate_limited: { statusCode: 429, error: 'Too Many Requests' },
  unavailable: { statusCode: 503, error: 'Service Unavailable' },
  internal: { statusCode: 500, error: 'Internal Server Error' },
  unsupported_media_type: { statusCode: 415, error: 'Unsupported Media Type' },
  request_timeout: { statusCode: 408, error: 'Request Timeout' },
  headers_too_large: { statusCode: 431, error: 'Request Header Fields Too Large' },
};

const grpcOf: Record<ErrorKind, GrpcStatus> = {
  invalid: GrpcStatus.INVALID_ARGUMENT,
  too_large: GrpcStatus.OUT_OF_RANGE,
  unauthorized: GrpcStatus.UNAUTHENTICATED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  conflict: GrpcStatus.ALREADY_EXISTS,
  gone: GrpcStatus.FAILED_PRECONDITION,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  unavailable: GrpcStatus.UNAVAILABLE,
  internal: GrpcStatus.INTERNAL,
  unsupported_media_type: GrpcStatus.INVALID_ARGUMENT,
  request_timeout: GrpcStatus.CANCELLED,
  headers_too_large: GrpcStatus.INVALID_ARGUMENT,
};

// The HTTP-only kinds share a gRPC code with another kind or mean nothing between services: a peer's code never
// maps back to them.
const HTTP_ONLY: ReadonlySet<ErrorKind> = new Set(['unsupported_media_type', 'request_timeout', 'headers_too_large']);
const kindOfGrpc = new Map<number, ErrorKind>(
  Object.entries(grpcOf)
    .filter(([k]) => !HTTP_ONLY.has(k as ErrorKind))
    .map(([k, v]) => [v, k as ErrorKind]),
);

/** The spec's three fields; a 400 of request validation adds `details.fields` (decision 0141), nothing else does. */
export interface ErrorBody {
  statusCode: number;
  message: string;
  error: string;
  details?: { fields: FieldError[] };
}

export function errorBody(kind: ErrorKind, message: string): ErrorBody {
  const { statusCode, error } = httpOf[kind];
  return { statusCode, message, error };
}

const isFieldList = (value: unknown): value is FieldError[] =>
  Array.isArray(value) && value.length > 0 && value.every((f) => typeof f?.field === 'string' && typeof f?.message === 'string');

/**
 * The answer to an error of the closed set. Of its `details` only a validation error's field list is answered; the
 * rest (a peer's cause with its addresses, a provider's code) is for the log.
 */
export function errorBodyOf(e: AppError): ErrorBody {
  const body = errorBody(e.kind, e.message);
  if (e.kind !== 'invalid') return body;
  const fields = e.details?.fields;
  // A 400 that lost its list (a peer that sends none) still answers one: the whole request.
  body.details = {
    fields: isFieldList(fields) ? fields.map(({ field, message }) => ({ field, message })) : [{ field: 'request', message: e.message }],
  };
  return body;
}

export const grpcStatusOf = (kind: ErrorKind): GrpcStatus => grpcOf[kind];

export const UNAVAILABLE_MESSAGE = 'A service this request needs is unavailable';

/**
 * A gRPC failure from a peer turned back into our error set. Deadline, connection and unknown failures become
 * unavailable with a fixed message: their text names internal addresses, so it stays in `details.cause` for the
 * log and never reaches a client.
 */
export function fromGrpcStatus(code: number, message: string, fields?: unknown): AppError {
  const kind = kindOfGrpc.get(code);
  if (kind === undefined || kind === 'unavailable') return new AppError('unavailable', UNAVAILABLE_MESSAGE, { cause: message });
  // A peer's 400 keeps the fields it named (sent as trailing metadata, see grpc/server.ts).
  if (kind === 'invalid' && isFieldList(fields)) return new AppError(kind, message, { fields });
  return new AppError(kind, message);
}

/** The gRPC trailing metadata key that carries an invalid error's field list between services. */
export const ERROR_FIELDS_METADATA = 'x-error-fields';

/** The field list of an error, as the metadata value a peer reads back (undefined when it has none). */
export function errorFieldsOf(e: AppError): string | undefined {
  const fields = e.kind === 'invalid' ? e.details?.fields : undefined;
  return isFieldList(fields) ? JSON.stringify(fields.map(({ field, message }) => ({ field, message }))) : undefined;
}

/** The field list a peer sent, or undefined when absent or malformed. */
export function parseErrorFields(value: unknown): FieldError[] | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isFieldList(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);

/** An id from a path that is not even a UUID names nothing: not found, like another company's id. */
export function requireUuid(value: string, what: string): string {
  if (!isUuid(value)) throw notFound(what);
  return value;
}

/** Postgres SQLSTATEs of a server that is going away or not accepting connections yet (class 08, 57P01-57P03). */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123])$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
/** pg's own messages for a connection that broke or never came (it sets no code on these). */
const STORE_UNAVAILABLE_MESSAGE =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Connection is closed|the database system is (shutting down|starting up|in recovery mode|not yet accepting connections)/i;

/**
 * A database that is down or restarting is the service's temporary unavailability (503, which clients retry), not
 * an internal error (500): the driver's error, or one an ORM wrapped around it, is recognised by its SQLSTATE,
 * its errno code or pg's message (decision 0123).
 */
export function isStoreUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; depth++) {
    for (const code of [(e as { code?: unknown }).code, (e as { sqlState?: unknown }).sqlState])
      if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
    if (STORE_UNAVAILABLE_MESSAGE.test(e.message)) return true;
    if (e instanceof AggregateError && e.errors.some((inner) => isStoreUnavailable(inner))) return true;
    e = (e as { cause?: unknown; previous?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return false;
}

/**
 * Postgres refused a number beyond its column's range (SQLSTATE 22003, numeric_value_out_of_range): the last resort
 * behind the range checks at the edge, a 400 rather than a 500, as the request cannot succeed.
 */
export function isNumberOutOfRange(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; depth++) {
    for (const code of [(e as { code?: unknown }).code, (e as { sqlState?: unknown }).sqlState]) if (code === '22003') return true;
    e = (e as { cause?: unknown; previous?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return false;
}

/** The 400 of a number Postgres refused: which field held it is unknown there, so it names the request. */
export const numberOutOfRange = () => invalidField('request', 'a number is beyond the range the service stores');
