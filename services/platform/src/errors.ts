import { status as GrpcStatus } from '@grpc/grpc-js';

/** Domain code throws these; each transport maps them exactly once (http/errors.ts, grpc/server.ts). */
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
  // Refused before any route runs (decision 0110).
  | 'unsupported_media_type'
  | 'request_timeout'
  // Headers over the HTTP parser's limit (decision 0122).
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

export interface FieldError {
  field: string;
  message: string;
}

const dotted = (field: string) => field.replace(/\[(\d+)\]/g, '.$1');

/**
 * No 400 without its fields (decision 0141). `message` may be given when its wording is not `field: text`; `extra`
 * details are for the log only.
 */
export const invalidFields = (
  fields: FieldError[],
  message = fields.map((f) => `${f.field}: ${f.message}`).join('; '),
  extra?: Record<string, unknown>,
) => new AppError('invalid', message, { ...extra, fields: fields.map((f) => ({ field: dotted(f.field), message: f.message })) });
export const invalidField = (field: string, message: string) => invalidFields([{ field, message }]);
/** Found while the body streams. */
export const tooLarge = (message: string) => new AppError('too_large', message);
export const unauthorized = (message = 'Unauthorized') => new AppError('unauthorized', message);
export const forbidden = (message = 'Forbidden') => new AppError('forbidden', message);
export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
export const conflict = (message: string) => new AppError('conflict', message);
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

// These share a gRPC code with another kind or mean nothing between services: a peer's code never maps back to them.
const HTTP_ONLY: ReadonlySet<ErrorKind> = new Set(['unsupported_media_type', 'request_timeout', 'headers_too_large']);
const kindOfGrpc = new Map<number, ErrorKind>(
  Object.entries(grpcOf)
    .filter(([k]) => !HTTP_ONLY.has(k as ErrorKind))
    .map(([k, v]) => [v, k as ErrorKind]),
);

/** A 400 of request validation adds `details.fields` (decision 0141), nothing else does. */
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

/** Only a validation error's field list is answered; other details (a peer's addresses) are for the log. */
export function errorBodyOf(e: AppError): ErrorBody {
  const body = errorBody(e.kind, e.message);
  if (e.kind !== 'invalid') return body;
  const fields = e.details?.fields;
  body.details = {
    fields: isFieldList(fields) ? fields.map(({ field, message }) => ({ field, message })) : [{ field: 'request', message: e.message }],
  };
  return body;
}

export const grpcStatusOf = (kind: ErrorKind): GrpcStatus => grpcOf[kind];

export const UNAVAILABLE_MESSAGE = 'A service this request needs is unavailable';

/**
 * Deadline, connection and unknown failures become unavailable with a fixed message: their text names internal
 * addresses, so it stays in the log.
 */
export function fromGrpcStatus(code: number, message: string, fields?: unknown): AppError {
  const kind = kindOfGrpc.get(code);
  if (kind === undefined || kind === 'unavailable') return new AppError('unavailable', UNAVAILABLE_MESSAGE, { cause: message });
  if (kind === 'invalid' && isFieldList(fields)) return new AppError(kind, message, { fields });
  return new AppError(kind, message);
}

export const ERROR_FIELDS_METADATA = 'x-error-fields';

export function errorFieldsOf(e: AppError): string | undefined {
  const fields = e.kind === 'invalid' ? e.details?.fields : undefined;
  return isFieldList(fields) ? JSON.stringify(fields.map(({ field, message }) => ({ field, message }))) : undefined;
}

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

/** A malformed id names nothing: not found, like another company's id. */
export function requireUuid(value: string, what: string): string {
  if (!isUuid(value)) throw notFound(what);
  return value;
}

const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123])$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
/** pg sets no code on these. */
const STORE_UNAVAILABLE_MESSAGE =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Connection is closed|the database system is (shutting down|starting up|in recovery mode|not yet accepting connections)/i;

/** A database that is down or restarting is a 503, which clients retry, not a 500 (decision 0123). */
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

/** The last resort behind the edge's range checks: a 400, as the request cannot succeed. */
export function isNumberOutOfRange(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; depth++) {
    for (const code of [(e as { code?: unknown }).code, (e as { sqlState?: unknown }).sqlState]) if (code === '22003') return true;
    e = (e as { cause?: unknown; previous?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return false;
}

/** Which field held the number is unknown here, so it names the request. */
export const numberOutOfRange = () => invalidField('request', 'a number is beyond the range the service stores');
