import type http from 'node:http';
import { browserHost } from './keys.js';

/**
 * CORS for `/integrations/external/*` (decision 0102). A preflight carries no key, so it is answered for any origin;
 * the request that follows is where the key and the spec's domain check decide. On that request the origin is
 * reflected only for a key with `allowed_domain`, which has just matched it: a key without one is a server's key, and
 * a browser page cannot read what it answers. A refused key or origin is the exception: its 401 carries the headers, so
 * the page can read why (decision 0150).
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

/** After the key was admitted: a browser key's page may read the answer (the origin matched allowed_domain). */
export function allowOrigin(req: http.IncomingMessage, res: http.ServerResponse, allowedDomain: string | undefined): void {
  const origin = req.headers.origin;
  if (allowedDomain === undefined || typeof origin !== 'string') return;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
  res.setHeader('vary', 'Origin');
}

/**
 * On a 401 of the external API: the page that sent the request may read the refusal, whatever its origin, as long as
 * the Origin is one a browser sends. The answer holds no data, only the reason.
 */
export function exposeRefusal(req: http.IncomingMessage, res: http.ServerResponse): void {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || browserHost(origin, 'origin') === undefined || res.headersSent) return;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
  res.setHeader('vary', 'Origin');
}
