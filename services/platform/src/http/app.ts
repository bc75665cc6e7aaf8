import express, {
  type ErrorRequestHandler,
  type Express as ExpressApp,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { AppError, errorBodyOf, forbidden, unauthorized } from '../errors.js';
import { hasPermission, IDENTITY_HEADER, type Identity, type IdentityVerifier } from '../identity.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { REQUEST_ID_HEADER, requestIdOf, withRequestId } from '../request-id.js';
import { checkPath, checkQuery, checkText, readBody } from './body.js';
import { toAppError, zodToInvalid } from './errors.js';

declare global {
  namespace Express {
    interface Request {
      identity?: Identity;
    }
  }
}

/** A check that is not `required` is reported but does not make the process unready (NATS, decision 0189). */
export type ReadinessCheck = { name: string; check: () => Promise<void>; required?: boolean };

const READINESS_TIMEOUT_MS = 2000;
const timeout = (ms: number) =>
  new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref());

export interface HttpAppOptions {
  logger: Logger;
  metrics: Metrics;
  verifier: IdentityVerifier;
  readiness: ReadinessCheck[];
  /** Served without identity for the gateway to merge. */
  openapi?: () => unknown;
  /** Every one requires a verified identity. */
  mount: (app: ExpressApp) => void;
  /** Routes that read their own bodies, applying decision 0110's JSON rule themselves (`jsonBody`). */
  mountOwnBody?: (app: ExpressApp) => void;
  bodyLimit?: string;
}

/** Health and readiness without identity; everything else behind a verified identity token; one error handler. */
export function createHttpApp(options: HttpAppOptions): ExpressApp {
  const { logger, metrics, verifier } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    withRequestId(requestId, next);
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      options.readiness.map(async ({ name, check, required = true }) => {
        try {
          // A hanging dependency answers as failed, not never.
          await Promise.race([check(), timeout(READINESS_TIMEOUT_MS)]);
          return { name, result: 'ok', required };
        } catch (err) {
          return { name, result: err instanceof Error ? err.message : String(err), required };
        }
      }),
    );
    const ready = results.every((r) => r.result === 'ok' || !r.required);
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'not ready', checks: Object.fromEntries(results.map((r) => [r.name, r.result])) });
  });
  const { openapi } = options;
  if (openapi) app.get('/openapi.json', (_req, res) => void res.json(openapi()));

  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched';
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpDuration.observe({ method: req.method, route, status: String(res.statusCode) }, seconds);
      if (res.statusCode >= 500) logger.error({ method: req.method, route, status: res.statusCode }, 'request failed');
    });
    next();
  });

  app.use(async (req: Request, _res: Response, next: NextFunction) => {
    try {
      req.identity = await verifier.verify(req.header(IDENTITY_HEADER));
      next();
    } catch (err) {
      next(err);
    }
  });
  app.use((req, _res, next) => {
    try {
      if (req.path.includes('%')) checkPath(req.path);
      checkQuery(req.query);
    } catch (err) {
      next(err);
      return;
    }
    next();
  });
  options.mountOwnBody?.(app);
  app.use(jsonBody(options.bodyLimit ?? '1mb'));
  options.mount(app);
  app.use((req, _res, next) => next(new AppError('not_found', `Cannot ${req.method} ${req.path}`)));
  app.use(errorHandler(logger));
  return app;
}

export { zodToInvalid };

/**
 * Decision 0110's rule as middleware; a body matching `other` is left to the route's own parser run before it, whose
 * text is checked all the same.
 */
export function jsonBody(limit: string, other?: RegExp): RequestHandler {
  return (req, _res, next) => {
    if (other?.test(req.headers['content-type'] ?? '')) {
      try {
        checkText(req.body);
      } catch (err) {
        next(err);
        return;
      }
      next();
      return;
    }
    readBody(req, { limit }).then((body) => {
      req.body = body;
      next();
    }, next);
  };
}

function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const appError = toAppError(err, logger, { method: req.method, path: req.path });
    if (res.headersSent) return;
    const body = errorBodyOf(appError);
    res.status(body.statusCode).json(body);
  };
}

/** Admin tokens never act as a key. */
export function integrationOf(req: { identity?: Identity }): Extract<Identity, { kind: 'integration' }> {
  const identity = req.identity;
  if (identity?.kind !== 'integration') throw unauthorized('An integration key is required');
  return identity;
}

/** 401 without a key, 403 naming the permission when the key lacks it (`*` holds all). */
export function integrationWith(req: { identity?: Identity }, permission: string): Extract<Identity, { kind: 'integration' }> {
  const identity = integrationOf(req);
  if (!hasPermission(identity, permission)) throw forbidden(`The key lacks the permission ${permission}`);
  return identity;
}

export function requireAdmin(req: { identity?: Identity }): void {
  if (req.identity?.kind !== 'admin') throw unauthorized('The admin token is required');
}
