import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { errorBodyOf } from '../errors.js';
import { IDENTITY_HEADER, type Identity, type IdentityVerifier } from '../identity.js';
import type { Logger } from '../logging.js';
import type { Metrics } from '../metrics.js';
import { REQUEST_ID_HEADER, requestIdOf, withRequestId } from '../request-id.js';
import { integrationWith } from './app.js';
import { checkPath, checkQuery, readBody, UNREAD } from './body.js';
import { type ContractInput, type RouteContract, routerPath } from './contract.js';
import { toAppError } from './errors.js';
import { parse, parseQuery } from './parse.js';
import { ROUTE_TEMPLATE_HEADER } from './route-template.js';

/**
 * Integration routes on bare node:http (decision 0014): Express costs more CPU than a whole GET lead. Handlers keep
 * Express' shape, so a route moves between the two by changing its router; unmatched paths fall through to Express.
 */
export interface ApiRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  headers: IncomingHttpHeaders;
  body: unknown;
  identity?: Identity;
  header(name: string): string | undefined;
  /** A streaming route reads a body that is not JSON from it. */
  raw: IncomingMessage;
}

export interface ApiResponse {
  statusCode: number;
  status(code: number): ApiResponse;
  setHeader(name: string, value: string): ApiResponse;
  json(body: unknown): void;
  /** Already serialized as JSON. */
  jsonText(text: string): void;
}

export type ApiHandler = (req: ApiRequest, res: ApiResponse) => unknown;

interface Route {
  method: HTTPMethod;
  path: string;
  handler: ApiHandler;
  /** Without one the route is listed as undocumented. */
  contract?: RouteContract;
  /** A body that is not JSON is left unread for the handler (`req.raw`). */
  streams?: boolean;
}

const isMultipart = (req: ApiRequest) => /^multipart\/form-data\b/i.test(String(req.headers['content-type'] ?? ''));

export class ApiRouter {
  readonly routes: Route[] = [];
  private add(method: HTTPMethod, path: string, handler: ApiHandler, contract?: RouteContract, streams?: boolean): this {
    this.routes.push({ method, path, handler, contract, streams });
    return this;
  }
  /** The permission is checked first, then every part is parsed by the contract (decision 0100). */
  route<C extends RouteContract>(
    contract: C,
    handler: (req: ApiRequest, res: ApiResponse, input: ContractInput<C>) => unknown,
    streams = false,
  ): this {
    const { permission, params, query, body, headers } = contract;
    const headerNames = headers ? Object.keys(headers.shape) : [];
    const checked: ApiHandler = (req, res) => {
      if (permission) integrationWith(req, permission);
      const input = {
        params: params ? parse(params, req.params) : req.params,
        query: query ? parseQuery(query, req.query) : undefined,
        body: body && !(streams && isMultipart(req)) ? parse(body, req.body) : undefined,
        headers: headers ? parse(headers, Object.fromEntries(headerNames.map((h) => [h, req.header(h)]))) : undefined,
      };
      return handler(req, res, input as ContractInput<C>);
    };
    return this.add(contract.method.toUpperCase() as HTTPMethod, routerPath(contract.path), checked, contract);
  }
  /**
   * A JSON body is read as by `route`; any other is left on `req.raw`, for the handler to read or refuse with 415
   * (decision 0110).
   */
  stream<C extends RouteContract>(contract: C, handler: (req: ApiRequest, res: ApiResponse, input: ContractInput<C>) => unknown): this {
    this.route(contract, handler, true);
    const added = this.routes[this.routes.length - 1]!;
    added.streams = true;
    return this;
  }
  get(path: string, handler: ApiHandler): this {
    return this.add('GET', path, handler);
  }
  post(path: string, handler: ApiHandler): this {
    return this.add('POST', path, handler);
  }
  put(path: string, handler: ApiHandler): this {
    return this.add('PUT', path, handler);
  }
  patch(path: string, handler: ApiHandler): this {
    return this.add('PATCH', path, handler);
  }
  delete(path: string, handler: ApiHandler): this {
    return this.add('DELETE', path, handler);
  }
}

export const apiRouter = () => new ApiRouter();

export interface ApiMount {
  prefix: string;
  router: ApiRouter;
}

export interface ApiDispatcherOptions {
  mounts: ApiMount[];
  verifier: IdentityVerifier;
  logger: Logger;
  metrics: Metrics;
  /** As raw-body takes it ('1mb'). */
  bodyLimit?: string;
}

class NodeApiResponse implements ApiResponse {
  statusCode = 200;
  constructor(private readonly res: ServerResponse) {}
  status(code: number): this {
    this.statusCode = code;
    return this;
  }
  setHeader(name: string, value: string): this {
    this.res.setHeader(name, value);
    return this;
  }
  json(body: unknown): void {
    this.jsonText(JSON.stringify(body));
  }
  jsonText(text: string): void {
    this.res.writeHead(this.statusCode, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    this.res.end(text);
  }
}

/** Returns false, touching nothing, when no API route matches. */
export function createApiDispatcher(options: ApiDispatcherOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { verifier, logger, metrics } = options;
  const limit = options.bodyLimit ?? '1mb';
  const router = FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true });
  for (const { prefix, router: r } of options.mounts) {
    for (const route of r.routes) {
      const pattern = `${prefix}${route.path}`;
      const template = pattern.replace(/:([^/]+)/g, '{$1}');
      router.on(route.method, pattern, () => undefined, { pattern, template, handler: route.handler, streams: route.streams === true });
    }
  }

  const serve = async (
    req: IncomingMessage,
    res: ServerResponse,
    store: { pattern: string; handler: ApiHandler; streams: boolean },
    params: Record<string, string | undefined>,
    path: string,
    search: string,
  ) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpDuration.observe({ method: req.method ?? '', route: store.pattern, status: String(res.statusCode) }, seconds);
      if (res.statusCode >= 500) logger.error({ method: req.method, route: store.pattern, status: res.statusCode }, 'request failed');
    });
    const response = new NodeApiResponse(res);
    try {
      const identity = await verifier.verify(req.headers[IDENTITY_HEADER] as string | undefined);
      const query = search ? parseQueryString(search) : {};
      if (search) checkQuery(query);
      if (path.includes('%')) checkPath(path);
      const read = await readBody(req, { limit, streams: store.streams });
      const body = read === UNREAD ? undefined : read;
      const request: ApiRequest = {
        method: req.method ?? 'GET',
        path,
        params: params as Record<string, string>,
        query,
        headers: req.headers,
        body,
        identity,
        raw: req,
        header: (name) => {
          const v = req.headers[name.toLowerCase()];
          return Array.isArray(v) ? v[0] : v;
        },
      };
      await store.handler(request, response);
    } catch (err) {
      const e = toAppError(err, logger, { method: req.method, path });
      if (res.headersSent) return;
      const answer = errorBodyOf(e);
      response.status(answer.statusCode).json(answer);
    }
  };

  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const found = router.find(req.method as HTTPMethod, path);
    if (!found) return false;
    const requestId = requestIdOf(req.headers[REQUEST_ID_HEADER]);
    res.setHeader(REQUEST_ID_HEADER, requestId);
    res.setHeader(ROUTE_TEMPLATE_HEADER, (found.store as { template: string }).template);
    withRequestId(
      requestId,
      () =>
        void serve(
          req,
          res,
          found.store as { pattern: string; handler: ApiHandler; streams: boolean },
          found.params,
          path,
          q < 0 ? '' : url.slice(q + 1),
        ),
    );
    return true;
  };
}
