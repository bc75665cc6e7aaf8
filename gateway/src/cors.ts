import type http from 'node:http';
import { browserHost } from './keys.js';

/**
 * A preflight carries no key, so any origin is allowed; the origin is reflected only for a key whose
 * `allowed_domain` matched it. A 401 carries the headers so the page can read why (decisions 0102, 0150).
 */
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOWED_HEADERS = 'authorization, content-type, x-idempotency-key, x-request-id';
const EXPOSED_HEADERS = 'x-request-id, ratelimit-limit, ratelimit-remaining, ratelimit-reset, retry-after';

export const isPreflight = (req: http.IncomingMessage): boolean =>
  req.method === 'OPTIONS' && typeof req.headers.origin === 'string' && typeof req.headers['access-control-request-method'] === 'string';

export function answerPreflight(req: http.IncomingMessage, res: http.ServerResponse): void {
  res
    .writeHead(204, {
      'access-control-allow-origin': req.headers.origin as string,
      'access-control-allow-methods': ALLOWED_METHODS,
      'access-control-allow-headers': ALLOWED_HEADERS,
      'access-control-max-age': '600',
      vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
    })
    .end();
}

export function allowOrigin(req: http.IncomingMessage, res: http.ServerResponse, allowedDomain: string | undefined): void {
  const origin = req.headers.origin;
  if (allowedDomain === undefined || typeof origin !== 'string') return;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
  res.setHeader('vary', 'Origin');
}

/** The refusal holds no data, so any browser origin may read it. */
export function exposeRefusal(req: http.IncomingMessage, res: http.ServerResponse): void {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || browserHost(origin, 'origin') === undefined || res.headersSent) return;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
  res.setHeader('vary', 'Origin');
}
