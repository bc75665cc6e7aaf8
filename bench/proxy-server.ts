/**
 * One proxy in front of UPSTREAM_URL, chosen by PROXY_KIND, for bench/experiments/proxy.ts and the bare forward of
 * `npm run bench`; it replaces `authorization` with the identity header PROXY_IDENTITY (a signed token when crm is
 * the upstream):
 *   node-http: node:http server, http.request with a keep-alive agent, responses piped back
 *   undici:    node:http server, undici Pool.request (keep-alive), body piped back
 *   undici-dispatch: node:http server, undici Pool.dispatch with a handler object that writes the answer to the
 *              response as it comes (no promise, no body stream per request)
 *   express-hpm: Express + http-proxy-middleware with the gateway's options (no auth, no rate limit)
 *   hpm:       node:http server + http-proxy-middleware with the same options, no Express
 *   hpm-lean:  node:http server + http-proxy-middleware without xfwd and proxyTimeout
 *   hpm-eject: as hpm, with the target as a URL object and hpm's default plugins ejected (the gateway's set-up
 *              since decision 0017: one plugin of its own for errors, the identity header and early closes)
 *   hpm-eject-id: as hpm-eject, with a request id made per request, sent upstream and answered (decision 0102)
 *   hpm-eject-id-als: as hpm-eject-id, each request served inside AsyncLocalStorage.run with its id, as the gateway
 *              does since decisions 0102 and 0140 (on Node 22 the first run turns on async_hooks for every resource)
 *   node-http-floor: node-http plus the least of what the gateway must do per request (decision 0268): the key's
 *              SHA-256 looked up in a Map, a request id sent upstream and answered, the request counted and sent to
 *              Redis (REDIS_URL) as one INCRBY at most every 20 ms with the RateLimit-* headers answered, and one
 *              prom-client histogram observation when the answer ends
 * Prints `listening <port>`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createProxyMiddleware, type Plugin } from 'http-proxy-middleware';
import { type Dispatcher, Pool } from 'undici';

const upstream = new URL(process.env.UPSTREAM_URL ?? 'http://127.0.0.1:1');
const kind = process.env.PROXY_KIND ?? 'node-http';
const identity = process.env.PROXY_IDENTITY ?? 'token';
let handler: http.RequestListener;

/** The bare forward: the request to the upstream with the identity in place of `authorization`, the answer piped back. */
function forwardBare(agent: http.Agent, req: http.IncomingMessage, res: http.ServerResponse, extra?: http.OutgoingHttpHeaders): void {
  const headers = { ...req.headers, 'x-svc-identity': identity, ...extra };
  delete headers.authorization;
  const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  out.on('error', () => res.writeHead(502).end());
  req.pipe(out);
}

if (kind === 'node-http') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  handler = (req, res) => forwardBare(agent, req, res);
} else if (kind === 'node-http-floor') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const { Redis } = await import('ioredis');
  const { Histogram, Registry } = await import('prom-client');
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const counterKey = `floor${randomUUID()}`;
  const duration = new Histogram({
    name: 'floor_request_duration_seconds',
    help: 'request duration',
    labelNames: ['route', 'status'],
    registers: [new Registry()],
  });
  const keys = new Map<string, { id: string; limit: number }>();
  let unsent = 0;
  let remaining = 1_000_000;
  const sendCount = () => {
    const n = unsent;
    unsent = 0;
    redis.incrby(counterKey, n).then(
      (used) => (remaining = 1_000_000 - used),
      () => undefined,
    );
  };
  let scheduled = false;
  handler = (req, res) => {
    const started = performance.now();
    const bearer = req.headers.authorization?.slice(7) ?? '';
    const hash = createHash('sha256').update(bearer).digest('hex');
    let key = keys.get(hash);
    if (!key) {
      key = { id: hash.slice(0, 12), limit: 1_000_000 };
      keys.set(hash, key);
    }
    unsent += 1;
    remaining -= 1;
    if (!scheduled) {
      scheduled = true;
      setTimeout(() => {
        scheduled = false;
        sendCount();
      }, 20);
    }
    const requestId = randomUUID();
    res.setHeader('x-request-id', requestId);
    res.setHeader('ratelimit-limit', key.limit);
    res.setHeader('ratelimit-remaining', Math.max(0, remaining));
    res.setHeader('ratelimit-reset', 60);
    res.on('finish', () => duration.observe({ route: 'leads', status: res.statusCode }, (performance.now() - started) / 1000));
    forwardBare(agent, req, res, { 'x-request-id': requestId });
  };
} else if (kind === 'undici-dispatch') {
  const pool = new Pool(upstream.origin, { connections: 128, pipelining: 1 });
  const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-connection']);
  class Relay implements Dispatcher.DispatchHandler {
    constructor(private readonly res: http.ServerResponse) {}
    onRequestStart(): void {}
    onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
      if (status < 200) return;
      const out: http.OutgoingHttpHeaders = {};
      for (const k in headers) if (!HOP.has(k)) out[k] = headers[k];
      this.res.writeHead(status, out);
    }
    onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
      if (!this.res.write(chunk)) {
        c.pause();
        this.res.once('drain', () => c.resume());
      }
    }
    onResponseEnd(): void {
      this.res.end();
    }
    onResponseError(_c: Dispatcher.DispatchController, _err: Error): void {
      if (!this.res.headersSent) this.res.writeHead(502).end();
      else this.res.destroy();
    }
  }
  handler = (req, res) => {
    const headers: Record<string, string | string[] | undefined> = {};
    for (const k in req.headers) if (k !== 'authorization' && !HOP.has(k)) headers[k] = req.headers[k];
    headers['x-svc-identity'] = identity;
    const bodiless = req.method === 'GET' || req.method === 'HEAD';
    pool.dispatch({ path: req.url ?? '/', method: req.method as 'GET', headers, body: bodiless ? null : req }, new Relay(res));
    if (bodiless) req.resume();
  };
} else if (kind === 'undici') {
  const pool = new Pool(upstream.origin, { connections: 128, pipelining: 1 });
  handler = (req, res) => {
    const headers: Record<string, string | string[] | undefined> = { ...req.headers, 'x-svc-identity': identity };
    delete headers.authorization;
    delete headers.connection;
    delete headers['keep-alive'];
    pool
      .request({ method: req.method as 'GET', path: req.url ?? '/', headers, body: req.method === 'GET' ? null : req })
      .then((up) => {
        res.writeHead(up.statusCode, up.headers as http.OutgoingHttpHeaders);
        up.body.pipe(res);
      })
      .catch(() => res.writeHead(502).end());
  };
} else if (kind === 'hpm' || kind === 'hpm-lean') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });
  const lean = kind === 'hpm-lean';
  const proxy = createProxyMiddleware({
    target: upstream.origin,
    agent,
    changeOrigin: false,
    ...(lean ? {} : { xfwd: true, proxyTimeout: 60_000 }),
    on: {
      proxyReq: (proxyReq) => {
        proxyReq.removeHeader('authorization');
        proxyReq.setHeader('x-svc-identity', identity);
      },
    },
  });
  handler = (req, res) => void proxy(req, res, () => res.writeHead(404).end());
} else if (kind.startsWith('hpm-eject')) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });
  const plugin: Plugin = (proxyServer) => {
    proxyServer.on('proxyReq', (proxyReq) => {
      proxyReq.removeHeader('authorization');
      proxyReq.setHeader('x-svc-identity', identity);
    });
    proxyServer.on('error', (_err, _req, res) => {
      if (res instanceof http.ServerResponse && !res.headersSent) res.writeHead(502).end();
    });
  };
  const proxy = createProxyMiddleware({
    target: new URL(upstream.origin),
    agent,
    changeOrigin: false,
    xfwd: true,
    proxyTimeout: 60_000,
    ejectPlugins: true,
    plugins: [plugin],
  });
  const plain: http.RequestListener = (req, res) => void proxy(req, res, () => res.writeHead(404).end());
  const context = new AsyncLocalStorage<{ requestId: string }>();
  const withId = (als: boolean): http.RequestListener => {
    return (req, res) => {
      const requestId = randomUUID();
      req.headers['x-request-id'] = requestId;
      res.setHeader('x-request-id', requestId);
      if (als) context.run({ requestId }, () => plain(req, res));
      else plain(req, res);
    };
  };
  handler = kind === 'hpm-eject-id' ? withId(false) : kind === 'hpm-eject-id-als' ? withId(true) : plain;
} else {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512, keepAliveMsecs: 10_000 });
  app.use(
    createProxyMiddleware({
      target: upstream.origin,
      agent,
      changeOrigin: false,
      xfwd: true,
      proxyTimeout: 60_000,
      on: {
        proxyReq: (proxyReq) => {
          proxyReq.removeHeader('authorization');
          proxyReq.setHeader('x-svc-identity', identity);
        },
      },
    }),
  );
  handler = app;
}

const server = http.createServer({ keepAliveTimeout: 65_000 }, handler);
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
