import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { AppError, errorBody, errorBodyOf, unauthorized, unavailable } from '@svc/platform/errors';
import { hasBody } from '@svc/platform/http/body';
import { EVENT_TYPES_PATH, listWebhookEventTypes } from '@svc/platform/http/event-types';
import { hasPermission, type IdentitySigner } from '@svc/platform/identity';
import type { Logger } from '@svc/platform/logging';
import { REQUEST_ID_HEADER, requestIdOf } from '@svc/platform/request-id';
import { isProbe, SpanKind, SpanStatusCode, startSpan, TRACEPARENT, type Tracer, traceparentOf } from '@svc/platform/tracing';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import { Gauge } from 'prom-client';
import { accessLogOf } from './access-log.js';
import { BATCH_BODY, BATCH_ERROR, type BatchRequest, pointsOf } from './batch.js';
import { clientAddressOf } from './client-address.js';
import type { GatewayConfig } from './config.js';
import { allowOrigin, answerPreflight, exposeRefusal, isPreflight } from './cors.js';
import { docsRouter } from './docs.js';
import { forwardTo } from './forward.js';
import type { AuthenticatedKey, KeyAuthenticator } from './keys.js';
import { ApiDocument } from './openapi.js';
import { DownloadRateLimiter, PUBLIC_PREFIX, PublicRateLimiter } from './public.js';
import type { KeyRateLimiter, RateDecision } from './rate-limit.js';
import { type GatewayMetrics, requestLabels } from './request-metrics.js';
import { companyOfKeyChange, type KeyRevocations } from './revocations.js';
import { adminUpstream, EXTERNAL_PREFIX, externalUpstream, type Upstream } from './routes.js';
import { HELD, type SlowRequest, slowBodies, WATCHED } from './slow-body.js';
import { UpstreamHealth } from './upstream-health.js';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  metrics: GatewayMetrics;
  redis: Redis;
  keys: KeyAuthenticator;
  limiter: KeyRateLimiter;
  signer: IdentitySigner;
  revocations: KeyRevocations;
  tracer?: Tracer | undefined;
}

const KEY_ID = Symbol('keyId');
const ROUTE_KEY = Symbol('routeTemplate');
/** An external request's path (no query) and owner, worked out once for the routing and the metrics. */
const PATH_KEY = Symbol('path');
const UPSTREAM_KEY = Symbol('upstream');
const REVOKES_KEY = Symbol('revokesCompany');

/** No promise made for a ready value (hot path, decision 0017). */
function andThen<T, R>(value: T | Promise<T>, next: (ready: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
type ProxiedRequest = SlowRequest &
  BatchRequest & {
    [KEY_ID]?: string;
    [REVOKES_KEY]?: string;
    [ROUTE_KEY]?: string;
    [PATH_KEY]?: string;
    [UPSTREAM_KEY]?: Upstream;
  };

/** Set on the response before anything else (decision 0146). */
const idOf = (res: http.ServerResponse) => res.getHeader(REQUEST_ID_HEADER) as string | undefined;

function sendError(res: http.ServerResponse, err: unknown, logger: Logger): void {
  const e = err instanceof AppError ? err : new AppError('internal', 'Internal server error');
  if (!(err instanceof AppError)) logger.error({ err, request_id: idOf(res) }, 'gateway error');
  else if (e.details?.cause) logger.warn({ err: e.details.cause, kind: e.kind, request_id: idOf(res) }, 'upstream failed');
  const body = errorBodyOf(e);
  if (!res.headersSent) res.writeHead(body.statusCode, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

/** No key: integrators read it before they have one (decision 0100). */
const OPENAPI_PATH = `${EXTERNAL_PREFIX}/openapi.json`;
const pathOf = (url: string) => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};
const isExternal = (url: string) =>
  url.startsWith(EXTERNAL_PREFIX) &&
  (url.length === EXTERNAL_PREFIX.length || url[EXTERNAL_PREFIX.length] === '/' || url[EXTERNAL_PREFIX.length] === '?');

/**
 * External traffic is served on bare node:http, since Express's prototype swap slows the proxy (decision 0011);
 * health and admin go through Express.
 */
export function createGatewayApp(deps: GatewayDeps): http.RequestListener {
  const { config, logger, metrics } = deps;
  const addressOf = clientAddressOf(config.TRUSTED_PROXIES, config.TRUSTED_PROXY_HEADER);
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.UPSTREAM_MAX_SOCKETS, keepAliveMsecs: 10_000 });
  const upstreamUrl: Record<Upstream, string> = {
    crm: config.CRM_URL,
    tasks: config.TASKS_URL,
    chat: config.CHAT_URL,
    files: config.FILES_URL,
    webhooks: config.WEBHOOKS_URL,
  };
  const health = new UpstreamHealth(upstreamUrl, {
    probeMs: config.UPSTREAM_PROBE_MS,
    logger,
    gauge: new Gauge({
      name: 'gateway_upstream_up',
      help: 'Whether the gateway reaches the service (0 while its routes answer 503 at once)',
      labelNames: ['upstream'],
      registers: [metrics.registry],
    }),
  });
  /** 503 with Retry-After, nothing sent to a service known to be down (decision 0189). */
  const answerDown = (res: http.ServerResponse, name: string, retryAfter: number) => {
    const body = errorBody('unavailable', `The ${name} service is unavailable`);
    res.writeHead(body.statusCode, { 'content-type': 'application/json', 'retry-after': String(retryAfter) }).end(JSON.stringify(body));
  };
  const hops = Object.fromEntries(
    Object.entries(upstreamUrl).map(([name, target]) => [
      name,
      forwardTo({
        agent,
        connections: config.UPSTREAM_MAX_SOCKETS,
        url: new URL(target),
        timeoutMs: config.UPSTREAM_TIMEOUT_MS,
        onRoute: (req, template) => {
          (req as ProxiedRequest)[ROUTE_KEY] = template;
        },
        onError: (err, req, res) => {
          logger.warn({ err: err.message, upstream: name, request_id: req.headers[REQUEST_ID_HEADER] }, 'upstream failed');
          health.failed(name, err);
          // Once the answer has begun, the broken response was destroyed; the client sees its connection close.
          if (!res.headersSent) answerDown(res, name, health.retryAfter(name) ?? 1);
        },
      }),
    ]),
  ) as Record<Upstream, ReturnType<typeof forwardTo>>;
  // Answered only once every gateway dropped the company's keys, so a revoked key is refused anywhere (decision 0120).
  const afterRevocation = (req: ProxiedRequest, res: http.ServerResponse) => (status: number) => {
    const companyId = req[REVOKES_KEY];
    return companyId && status < 300 ? deps.revocations.revoke(companyId, idOf(res)) : undefined;
  };

  const { watchBody, holdBody } = slowBodies(config, logger, idOf);
  const send = (upstream: Upstream, token: string, req: ProxiedRequest, res: http.ServerResponse) => {
    const retryAfter = health.retryAfter(upstream);
    if (retryAfter !== undefined) {
      logger.warn({ upstream, request_id: idOf(res), known_down: true }, 'upstream failed');
      return answerDown(res, upstream, retryAfter);
    }
    try {
      hops[upstream](req, res, {
        identity: token,
        body: req[BATCH_BODY],
        held: req[HELD],
        watched: req[WATCHED],
        beforeAnswer: req[REVOKES_KEY] && upstream === 'crm' ? afterRevocation(req, res) : undefined,
      });
    } catch (err) {
      sendError(res, err, logger);
    }
  };
  const forward = (upstream: Upstream, token: string, req: ProxiedRequest, res: http.ServerResponse) => {
    if (req.complete || !hasBody(req)) return send(upstream, token, req, res);
    watchBody(req, res);
    holdBody(req, () => send(upstream, token, req, res));
  };
  const document = new ApiDocument(upstreamUrl);
  const openapi = (req: http.IncomingMessage, res: http.ServerResponse) => {
    observe(req, res);
    document.text().then(
      (text) =>
        res
          .writeHead(200, {
            'content-type': 'application/json; charset=utf-8',
            'cache-control': 'public, max-age=30',
            'access-control-allow-origin': '*',
          })
          .end(text),
      (err: unknown) => sendError(res, err, logger),
    );
  };
  // The event catalog lives only in the assembled document (decision 0176).
  const eventTypes = (key: AuthenticatedKey, res: http.ServerResponse) => {
    const permission = listWebhookEventTypes.permission;
    if (!hasPermission(key.identity, permission)) throw new AppError('forbidden', `The key lacks the permission ${permission}`);
    return document.eventTypes().then((text) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(text);
    });
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // A service that is down fails only its own routes (decision 0189), and Redis has an in-memory fallback.
  app.get('/readyz', (_req, res) => {
    res.json({ status: 'ready', upstreams: health.states(), redis: deps.redis.status === 'ready' ? 'ok' : deps.redis.status });
  });
  app.use(docsRouter());

  // One child per label set, so observing a request hashes nothing.
  const durations = new Map<string, { observe(seconds: number): void }>();
  const accessLog = accessLogOf(logger);
  // Never the key nor the query string (it may carry search terms); probes are not logged.
  const observe = (req: ProxiedRequest, res: http.ServerResponse) => {
    const started = performance.now();
    res.on('finish', () => {
      const method = req.method ?? '';
      const status = res.statusCode;
      const path = req[PATH_KEY] ?? pathOf((req as { originalUrl?: string }).originalUrl ?? req.url ?? '');
      const { route, upstream } = requestLabels(method, path, status, req[ROUTE_KEY], req[UPSTREAM_KEY]);
      const id = `${method} ${route} ${upstream} ${status}`;
      let child = durations.get(id);
      if (!child) {
        child = metrics.requests.labels({ method, route, upstream, status: String(status) });
        if (durations.size < 1000) durations.set(id, child);
      }
      const seconds = (performance.now() - started) / 1000;
      child.observe(seconds);
      if (config.ACCESS_LOG) {
        accessLog({
          request_id: idOf(res),
          method,
          route,
          path,
          status,
          duration_ms: Math.round(seconds * 1e6) / 1e3,
          key_id: req[KEY_ID],
          client_address: addressOf(req),
        });
      }
    });
  };
  app.use((req, res, next) => {
    observe(req, res);
    next();
  });

  // One key's slow requests cannot take every connection to a service (decision 0151).
  const inFlight = new Map<string, number>();
  const tooMany = `Too many concurrent requests for this key: at most ${config.KEY_MAX_IN_FLIGHT} at once`;
  const admitInFlight = (keyId: string, res: http.ServerResponse) => {
    const n = inFlight.get(keyId) ?? 0;
    if (n >= config.KEY_MAX_IN_FLIGHT) {
      res.setHeader('Retry-After', '1');
      throw new AppError('rate_limited', tooMany);
    }
    inFlight.set(keyId, n + 1);
    res.on('close', () => {
      const left = (inFlight.get(keyId) ?? 1) - 1;
      if (left > 0) inFlight.set(keyId, left);
      else inFlight.delete(keyId);
    });
  };

  // No promise on the hot path unless crm, Redis or a signing is awaited (decision 0017).
  const limited = (decision: RateDecision, key: AuthenticatedKey, req: ProxiedRequest, res: http.ServerResponse) => {
    req[KEY_ID] = key.keyId;
    allowOrigin(req, res, key.allowedDomain);
    res.setHeader('RateLimit-Limit', String(decision.limit));
    res.setHeader('RateLimit-Remaining', String(decision.remaining));
    res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
    if (!decision.allowed) {
      res.setHeader('Retry-After', String(decision.resetSeconds));
      throw new AppError('rate_limited', `Rate limit of ${decision.limit} requests per minute exceeded`);
    }
    if (req[BATCH_ERROR] !== undefined) throw req[BATCH_ERROR];
    const path = req[PATH_KEY] ?? '';
    if (path === EVENT_TYPES_PATH && req.method === 'GET') return eventTypes(key, res);
    const upstream = externalUpstream(path, req.method);
    if (!upstream) throw new AppError('not_found', `Cannot ${req.method} ${path}`);
    req[UPSTREAM_KEY] = upstream;
    admitInFlight(key.keyId, res);
    return andThen(key.token(), (token) => forward(upstream, token, req, res));
  };
  const refuse = (req: ProxiedRequest, res: http.ServerResponse, err: unknown) => {
    if (err instanceof AppError && err.kind === 'unauthorized') exposeRefusal(req, res);
    sendError(res, err, logger);
  };
  const external = (req: ProxiedRequest, res: http.ServerResponse) => {
    req[PATH_KEY] = pathOf(req.url ?? '');
    observe(req, res);
    if (isPreflight(req)) return answerPreflight(req, res);
    try {
      const done = andThen(deps.keys.authenticate(req.headers.authorization, req.headers.origin, req.headers.referer, idOf(res)), (key) =>
        andThen(pointsOf(req, res, watchBody), (points) =>
          andThen(deps.limiter.consume(key.keyId, key.rateLimitPerMinute, points), (decision) => limited(decision, key, req, res)),
        ),
      );
      if (done instanceof Promise) done.catch((err: unknown) => refuse(req, res, err));
    } catch (err) {
      refuse(req, res, err);
    }
  };

  const adminDigest = createHash('sha256').update(config.ADMIN_TOKEN).digest();
  let adminToken: { value: string; refreshAt: number } | undefined;
  app.use('/admin/v1', async (req, res) => {
    try {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      const given = createHash('sha256')
        .update(match?.[1] ?? '')
        .digest();
      if (!match || !timingSafeEqual(given, adminDigest)) throw unauthorized('The admin token is required');
      const upstream = adminUpstream(req.originalUrl.split('?')[0] ?? '');
      if (!upstream) throw new AppError('not_found', `Cannot ${req.method} ${req.originalUrl.split('?')[0]}`);
      if (!adminToken || adminToken.refreshAt <= Date.now()) {
        adminToken = { value: await deps.signer.sign({ kind: 'admin' }), refreshAt: Date.now() + deps.signer.lifetimeMs / 2 };
      }
      req.url = req.originalUrl;
      (req as ProxiedRequest)[REVOKES_KEY] = companyOfKeyChange(req.method, req.originalUrl);
      forward(upstream, adminToken.value, req, res);
    } catch (err) {
      sendError(res, err, logger);
    }
  });

  // Signed downloads: the URL's signature is the credential (decision 0077); limited per address (decision 0137).
  const downloadLimiter = new DownloadRateLimiter(
    deps.redis,
    config.REDIS_KEY_PREFIX,
    config.PUBLIC_FILES_RATE_LIMIT_PER_MINUTE,
    addressOf,
  );
  app.get('/public/files/:id', async (req, res) => {
    try {
      await downloadLimiter.consume(req, res);
      req.url = req.originalUrl;
      forward('files', '', req, res);
    } catch (err) {
      sendError(res, err, logger);
    }
  });

  // Forwarded as the `public` identity, which no other route of any service accepts.
  const publicLimiter = new PublicRateLimiter(
    deps.redis,
    config.REDIS_KEY_PREFIX,
    config.PUBLIC_RATE_LIMIT_PER_MINUTE,
    config.PUBLIC_TOKEN_RATE_LIMIT_PER_MINUTE,
    addressOf,
  );
  let publicToken: { value: string; refreshAt: number } | undefined;
  app.use(PUBLIC_PREFIX, async (req, res) => {
    try {
      await publicLimiter.consume(req, res);
      if (!publicToken || publicToken.refreshAt <= Date.now()) {
        publicToken = { value: await deps.signer.sign({ kind: 'public' }), refreshAt: Date.now() + deps.signer.lifetimeMs / 2 };
      }
      req.url = req.originalUrl;
      forward('crm', publicToken.value, req, res);
    } catch (err) {
      sendError(res, err, logger);
    }
  });

  // Providers (Meta) call without a key: chat checks their signature over the raw body, streamed untouched.
  app.use('/providers', (req, res) => {
    req.url = req.originalUrl;
    forward('chat', '', req, res);
  });

  app.use((req, res) => sendError(res, new AppError('not_found', `Cannot ${req.method} ${req.path}`), logger));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => sendError(res, err ?? unavailable('upstream'), logger));
  const dispatch = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = req.url ?? '';
    if (url.startsWith(OPENAPI_PATH) && (url.length === OPENAPI_PATH.length || url[OPENAPI_PATH.length] === '?') && req.method === 'GET') {
      openapi(req, res);
    } else if (isExternal(url)) external(req, res);
    else app(req, res);
  };
  // No AsyncLocalStorage: its first use turns on async_hooks process-wide (decision 0146).
  const { tracer } = deps;
  return (req, res) => {
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    req.headers[REQUEST_ID_HEADER] = requestId;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    if (tracer && !isProbe(req.url ?? '')) traced(tracer, req, res);
    dispatch(req, res);
  };
}

/** The gateway's server span, child of the caller's `traceparent` (decision 0200). */
function traced(tracer: Tracer, req: http.IncomingMessage, res: http.ServerResponse): void {
  const span = startSpan(tracer, `gateway ${req.method}`, SpanKind.SERVER, req.headers[TRACEPARENT], {
    'http.request.method': req.method ?? '',
    'url.path': pathOf(req.url ?? ''),
    'http.request.header.x-request-id': String(req.headers[REQUEST_ID_HEADER]),
  });
  req.headers[TRACEPARENT] = traceparentOf(span);
  res.once('close', () => {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
}
