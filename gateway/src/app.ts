import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { AppError, errorBody, unauthorized, unavailable } from '@svc/platform/errors';
import { IDENTITY_HEADER, type IdentitySigner } from '@svc/platform/identity';
import type { Logger } from '@svc/platform/logging';
import type { Metrics } from '@svc/platform/metrics';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createProxyMiddleware, type RequestHandler } from 'http-proxy-middleware';
import type { Redis } from 'ioredis';
import type { GatewayConfig } from './config.js';
import type { KeyAuthenticator } from './keys.js';
import type { KeyRateLimiter } from './rate-limit.js';
import { adminUpstream, externalUpstream, type Upstream } from './routes.js';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  metrics: Metrics;
  redis: Redis;
  keys: KeyAuthenticator;
  limiter: KeyRateLimiter;
  signer: IdentitySigner;
}

const TOKEN_KEY = Symbol('identityToken');
type ProxiedRequest = http.IncomingMessage & { [TOKEN_KEY]?: string };

function sendError(res: http.ServerResponse, err: unknown, logger: Logger): void {
  const e = err instanceof AppError ? err : new AppError('internal', 'Internal server error');
  if (!(err instanceof AppError)) logger.error({ err }, 'gateway error');
  const body = errorBody(e.kind, e.message);
  if (!res.headersSent) res.writeHead(body.statusCode, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

const EXTERNAL_PREFIX = '/integrations/external';
const isExternal = (url: string) =>
  url.startsWith(EXTERNAL_PREFIX) &&
  (url.length === EXTERNAL_PREFIX.length || url[EXTERNAL_PREFIX.length] === '/' || url[EXTERNAL_PREFIX.length] === '?');

/**
 * The gateway's request listener. `/integrations/external/*` (the integrations' traffic) is served on the bare
 * node:http request and response: key authentication, rate limit, then http-proxy-middleware straight to the
 * owning service. Express would cost ~180 µs of CPU per proxied request here (it swaps the prototypes of the
 * request and response objects, which slows down everything the proxy does with them; bench/README.md,
 * decision 0011). Everything else (health, metrics, the admin API) goes through Express.
 */
export function createGatewayApp(deps: GatewayDeps): http.RequestListener {
  const { config, logger, metrics } = deps;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });
  const upstreamUrl: Record<Upstream, string> = {
    crm: config.CRM_URL,
    tasks: config.TASKS_URL,
    chat: config.CHAT_URL,
    files: config.FILES_URL,
    webhooks: config.WEBHOOKS_URL,
  };
  const proxies = Object.fromEntries(
    Object.entries(upstreamUrl).map(([name, target]) => [
      name,
      createProxyMiddleware<ProxiedRequest, http.ServerResponse>({
        target,
        agent,
        changeOrigin: false,
        xfwd: true,
        proxyTimeout: config.UPSTREAM_TIMEOUT_MS,
        on: {
          proxyReq: (proxyReq, req) => {
            proxyReq.removeHeader('authorization');
            proxyReq.setHeader(IDENTITY_HEADER, req[TOKEN_KEY] ?? '');
          },
          error: (err, _req, res) => {
            logger.warn({ err: err.message, upstream: name }, 'upstream failed');
            if (res instanceof http.ServerResponse && !res.headersSent) {
              const body = errorBody('unavailable', `The ${name} service is unavailable`);
              res.writeHead(body.statusCode, { 'content-type': 'application/json' }).end(JSON.stringify(body));
            } else if (!(res instanceof http.ServerResponse)) {
              res.destroy();
            }
          },
        },
      }),
    ]),
  ) as Record<Upstream, RequestHandler<ProxiedRequest, http.ServerResponse>>;

  const forward = (upstream: Upstream, token: string, req: ProxiedRequest, res: http.ServerResponse) => {
    req[TOKEN_KEY] = token;
    proxies[upstream](req, res, () => sendError(res, new AppError('not_found', 'Not found'), logger)).catch((err: unknown) =>
      sendError(res, err, logger),
    );
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks: Record<string, string> = {};
    await Promise.all([
      deps.redis.ping().then(
        () => (checks.redis = 'ok'),
        (err: Error) => (checks.redis = err.message),
      ),
      ...Object.entries(upstreamUrl).map(([name, url]) =>
        fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
          (r) => (checks[name] = r.ok ? 'ok' : `status ${r.status}`),
          (err: Error) => (checks[name] = err.message),
        ),
      ),
    ]);
    const ready = Object.values(checks).every((v) => v === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  const observe = (req: http.IncomingMessage, res: http.ServerResponse, route: string) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      metrics.httpDuration.observe(
        { method: req.method ?? '', route, status: String(res.statusCode) },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
  };
  app.use((req, res, next) => {
    observe(req, res, req.path.startsWith('/admin/') ? 'admin' : 'other');
    next();
  });

  const external = async (req: ProxiedRequest, res: http.ServerResponse) => {
    observe(req, res, 'external');
    try {
      const key = await deps.keys.authenticate(req.headers.authorization, req.headers.origin, req.headers.referer);
      const decision = await deps.limiter.consume(key.keyId, key.rateLimitPerMinute);
      res.setHeader('RateLimit-Limit', String(decision.limit));
      res.setHeader('RateLimit-Remaining', String(decision.remaining));
      res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
      if (!decision.allowed) {
        res.setHeader('Retry-After', String(decision.resetSeconds));
        throw new AppError('rate_limited', `Rate limit of ${decision.limit} requests per minute exceeded`);
      }
      const path = (req.url ?? '').split('?')[0] ?? '';
      const upstream = externalUpstream(path);
      if (!upstream) throw new AppError('not_found', `Cannot ${req.method} ${path}`);
      forward(upstream, await key.token(), req, res);
    } catch (err) {
      sendError(res, err, logger);
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
      forward(upstream, adminToken.value, req, res);
    } catch (err) {
      sendError(res, err, logger);
    }
  });

  app.use((req, res) => sendError(res, new AppError('not_found', `Cannot ${req.method} ${req.path}`), logger));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => sendError(res, err ?? unavailable('upstream'), logger));
  return (req, res) => {
    if (isExternal(req.url ?? '')) void external(req, res);
    else app(req, res);
  };
}
