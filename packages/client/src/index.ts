import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

/**
 * A typed client of the external API, generated from its OpenAPI document (decision 0104): paths, parameters,
 * bodies and answers are the document's (src/schema.d.ts), the calls are openapi-fetch's, relative to the
 * document's server (`/integrations/external`).
 *
 *   const api = createClient({ baseUrl: 'https://crm.example', key: process.env.CRM_KEY });
 *   const { data, error } = await api.POST('/leads', { body: { title: 'New lead' } });
 *   if (error) console.error(error.status, error.message, error.request_id);
 *
 * `error` is an `ApiError`: the error body's fields, the HTTP status and the request id to quote to support.
 * GETs, and writes sent with an `x-idempotency-key`, are retried on 429 and 503 after the answer's `Retry-After`.
 */
export type { components, paths };
export type Schemas = components['schemas'];
export type ApiClient = Client<paths>;

/** Where the external API lives on the gateway: the OpenAPI document's server. */
export const API_BASE_PATH = '/integrations/external';

export interface ApiClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The gateway's address (`https://crm.example`), without `/integrations/external`. */
  baseUrl: string;
  /** The integration key (`svc_…`), sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** How many times a safe request is sent again after a 429 or 503 (default 3; 0 turns retries off). */
  retries?: number;
  /** The longest wait before a retry, in milliseconds, whatever `Retry-After` asks (default 60 000). */
  maxRetryDelayMs?: number;
}

/** An answer other than 2xx: the API's error body, its status and the request id (`x-request-id`). */
export class ApiError extends Error {
  override name = 'ApiError';
  /** The HTTP status of the answer. */
  readonly status: number;
  readonly statusCode: number;
  readonly error: string;
  /** A validation 400's offending fields. */
  readonly details?: { fields: { field: string; message: string }[] };
  /** The request's id, to quote to support; null when the answer had none. */
  readonly request_id: string | null;
  /** Seconds the answer asked to wait (`Retry-After`), when it said. */
  readonly retry_after: number | null;

  constructor(response: Response, body: unknown) {
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const message = typeof fields.message === 'string' ? fields.message : typeof body === 'string' && body ? body : response.statusText;
    super(message);
    this.status = response.status;
    this.statusCode = typeof fields.statusCode === 'number' ? fields.statusCode : response.status;
    this.error = typeof fields.error === 'string' ? fields.error : response.statusText;
    if (fields.details) this.details = fields.details as ApiError['details'];
    this.request_id = response.headers.get('x-request-id');
    this.retry_after = retryAfterSeconds(response.headers.get('retry-after'));
  }
}

export const isApiError = (value: unknown): value is ApiError => value instanceof ApiError;

function retryAfterSeconds(value: string | null): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const RETRIED_STATUSES = new Set([429, 503]);

/** A request that can be sent twice without a second effect: a read, or a write the server deduplicates by its key. */
const retriable = (request: Request) => SAFE_METHODS.has(request.method) || request.headers.has('x-idempotency-key');

function retryingFetch(inner: (input: Request) => Promise<Response>, retries: number, maxDelayMs: number) {
  return async (input: Request): Promise<Response> => {
    const canRetry = retries > 0 && retriable(input);
    for (let attempt = 0; ; attempt++) {
      const response = await inner(canRetry ? input.clone() : input);
      if (!canRetry || attempt >= retries || !RETRIED_STATUSES.has(response.status)) return response;
      const asked = retryAfterSeconds(response.headers.get('retry-after'));
      const delay = Math.min(maxDelayMs, asked === null ? 2 ** attempt * 500 : asked * 1000);
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };
}

const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE', 'request'] as const;

export function createClient({
  baseUrl,
  key,
  headers,
  retries = 3,
  maxRetryDelayMs = 60_000,
  fetch: inner,
  ...options
}: ApiClientOptions): ApiClient {
  const client = createFetchClient<paths>({
    ...options,
    baseUrl: `${baseUrl.replace(/\/+$/, '')}${API_BASE_PATH}`,
    fetch: retryingFetch(inner ?? ((request) => globalThis.fetch(request)), retries, maxRetryDelayMs),
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(headers as Record<string, string> | undefined) },
  });
  const typed = { ...client } as Record<(typeof METHODS)[number], (...args: unknown[]) => Promise<{ error?: unknown; response: Response }>>;
  for (const method of METHODS) {
    const call = typed[method];
    typed[method] = async (...args) => {
      const result = await call(...args);
      return result.error === undefined ? result : { ...result, error: new ApiError(result.response, result.error) };
    };
  }
  return typed as unknown as ApiClient;
}
