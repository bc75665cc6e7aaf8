import http from 'node:http';
import type { Readable } from 'node:stream';
import { hasBody } from '@svc/platform/http/body';
import { ROUTE_TEMPLATE_HEADER } from '@svc/platform/http/route-template';
import { IDENTITY_HEADER } from '@svc/platform/identity';
import { type Dispatcher, Pool } from 'undici';

/**
 * The gateway's proxy hop (decision 0243): what http-proxy-middleware and httpxy did for the gateway's options
 * (`xfwd`, `proxyTimeout`, no path rewrite, no redirects), without their promises, events and per-request option
 * objects. A bodiless GET or HEAD, the reads, goes on undici's `dispatch` with one handler object, which writes the
 * answer to the client as it comes (decision 0271); every other request on node:http's client, which streams a body.
 */
export interface ForwardTarget {
  /** Keep-alive, for requests with a body. */
  agent: http.Agent;
  /** Connections to the service for the bodiless reads. */
  connections: number;
  /** The service's base URL; its path, if any, prefixes the request's. */
  url: URL;
  timeoutMs: number;
  /** The upstream could not be reached, timed out or broke off. */
  onError(err: NodeJS.ErrnoException, req: http.IncomingMessage, res: http.ServerResponse): void;
  /** The route template the service answered with (decision 0195). */
  onRoute(req: http.IncomingMessage, template: string): void;
}

export interface Outgoing {
  /** Sent as the identity header in place of `authorization`. */
  identity: string;
  /** The body already read and replaced (a batch, decision 0181). */
  body?: string;
  /** The body held back until it arrived (decision 0151), streamed in place of the request. */
  held?: Readable;
  /** A stalled client must not hold the service's socket. */
  watched?: boolean;
  /** Waited for before the answer is written (revocations, decision 0120). */
  beforeAnswer?: (status: number) => Promise<void> | undefined;
}

/** Never copied to the client (RFC 9110 7.6.1), nor the gateway-only template. */
const DROPPED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'proxy-connection',
  'upgrade',
  'te',
  'trailer',
  ROUTE_TEMPLATE_HEADER,
]);
/** Hop-by-hop request headers (RFC 9110 7.6.1), which undici also refuses; `expect` was answered by the gateway. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'expect']);
const PORT = /:(\d+)/;
const TRANSFER_ENCODING_TOKEN = /(^|,)\s*transfer-encoding\s*($|,)/i;

function destroyOnTimeout(this: http.ClientRequest): void {
  this.destroy();
}

/** As httpxy's `xfwd`: the client's own values are kept, the gateway's added only where none came. */
function addForwarding(headers: Record<string, string | string[] | undefined>, req: http.IncomingMessage): void {
  const host = req.headers.host;
  headers['x-forwarded-for'] ||= req.socket.remoteAddress;
  headers['x-forwarded-port'] ||= (host && PORT.exec(host)?.[1]) || '80';
  headers['x-forwarded-proto'] ||= 'http';
  headers['x-forwarded-host'] ||= host ?? '';
}

/** The service's answer headers less the hop-by-hop ones and the gateway-only template; Node frames the body again. */
function answerHeaders(headers: Record<string, string | string[] | undefined>): http.OutgoingHttpHeaders {
  const answer: http.OutgoingHttpHeaders = {};
  for (const key in headers) {
    const value = headers[key];
    if (value !== undefined && !DROPPED.has(key)) answer[key] = value;
  }
  return answer;
}

/** The service's answer to the client, as it streams in. */
function streamAnswer(res: http.ServerResponse, status: number, headers: http.OutgoingHttpHeaders, proxyRes: http.IncomingMessage): void {
  res.writeHead(status, headers);
  proxyRes.pipe(res);
}

const EXCHANGE = Symbol('exchange');
type WithExchange = http.ServerResponse & { [EXCHANGE]?: Exchange };

/** The client's response closed: before it finished, the service's request is dropped. */
function clientClosed(this: WithExchange): void {
  if (!this.writableFinished) this[EXCHANGE]?.abort();
}

interface Hop {
  onError: ForwardTarget['onError'];
  onRoute: ForwardTarget['onRoute'];
}

/**
 * One bodiless read on undici (decision 0271): the methods undici calls write the answer to the client as it
 * arrives, pausing the service's connection while the client's is full; nothing is allocated per chunk.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private gone = false;

  constructor(
    private readonly hop: Hop,
    private readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
  ) {}

  abort(): void {
    this.gone = true;
    this.controller?.abort(new Error('the client closed its connection'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.gone) controller.abort(new Error('the client closed its connection'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    // Informational answers come before the final one.
    if (status < 200) return;
    const { req, res } = this;
    const template = headers[ROUTE_TEMPLATE_HEADER];
    if (template !== undefined) this.hop.onRoute(req, String(template));
    if (statusMessage && req.httpVersionMajor < 2) res.statusMessage = statusMessage;
    res.writeHead(status, answerHeaders(headers));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    this.res.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    // The client went away first: nothing to answer, nothing wrong with the service.
    if (this.gone) return;
    // Once the answer has begun, the client sees its connection close.
    if (this.res.headersSent) this.res.destroy();
    this.hop.onError(err as NodeJS.ErrnoException, this.req, this.res);
  }
}

export function forwardTo(target: ForwardTarget): (req: http.IncomingMessage, res: http.ServerResponse, out: Outgoing) => void {
  const { agent, timeoutMs, onError, onRoute } = target;
  const hostname = target.url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = target.url.port || '80';
  const prefix = target.url.pathname === '/' ? '' : target.url.pathname.replace(/\/$/, '');
  const pool = new Pool(target.url.origin, {
    connections: target.connections,
    pipelining: 1,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const hop: Hop = { onError, onRoute };

  const read = (req: http.IncomingMessage, res: http.ServerResponse, out: Outgoing, method: 'GET' | 'HEAD', path: string) => {
    const headers: Record<string, string | string[] | undefined> = {};
    for (const key in req.headers) if (key !== 'authorization' && !HOP_BY_HOP.has(key)) headers[key] = req.headers[key];
    headers[IDENTITY_HEADER] = out.identity;
    addForwarding(headers, req);
    const exchange = new Exchange(hop, req, res);
    (res as WithExchange)[EXCHANGE] = exchange;
    res.on('close', clientClosed);
    pool.dispatch({ method, path, headers, body: null }, exchange);
  };

  return (req, res, out) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const path = url[0] === '/' ? prefix + url : `${prefix}/${url}`;
    if ((method === 'GET' || method === 'HEAD') && out.body === undefined && !out.held && !out.beforeAnswer && !hasBody(req))
      return read(req, res, out, method, path);
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    delete headers.authorization;
    headers[IDENTITY_HEADER] = out.identity;
    addForwarding(headers as Record<string, string | string[] | undefined>, req);
    if ((method === 'DELETE' || method === 'OPTIONS') && !headers['content-length'] && !headers['transfer-encoding'])
      headers['content-length'] = '0';
    if (out.body !== undefined) {
      delete headers['transfer-encoding'];
      headers['content-length'] = String(Buffer.byteLength(out.body));
    } else if (
      headers['transfer-encoding'] !== undefined ||
      (typeof headers.connection === 'string' && TRANSFER_ENCODING_TOKEN.test(headers.connection))
    ) {
      // A chunked body never shares the service's socket with the next request (request smuggling).
      headers.connection = 'close';
    }
    const proxyReq = http.request({ agent, hostname, port, method, path, headers });
    const failed = (err: NodeJS.ErrnoException) => {
      // The client went away first: nothing to answer, nothing wrong with the service.
      if (!req.socket.writable && err.code === 'ECONNRESET') {
        proxyReq.destroy();
        return;
      }
      onError(err, req, res);
    };
    proxyReq.on('error', failed);
    req.on('error', failed);
    proxyReq.setTimeout(timeoutMs, destroyOnTimeout);
    let answer: http.IncomingMessage | undefined;
    // One listener for both ends, registered before the answer: fewer per request.
    res.on('close', () => {
      if (!res.writableFinished) proxyReq.destroy();
      answer?.destroy();
    });
    if (out.watched)
      req.once('close', () => {
        if (!req.complete) proxyReq.destroy();
      });
    proxyReq.on('response', (proxyRes) => {
      answer = proxyRes;
      const source = out.held ?? req;
      // An answer before the whole body was sent (a refusal): the rest is drained, the client's connection kept.
      if (!proxyReq.writableFinished) {
        proxyRes.once('end', () => {
          if (!proxyReq.writableFinished) {
            source.unpipe(proxyReq);
            source.resume();
          }
        });
        proxyRes.once('close', () => {
          if (!proxyReq.writableFinished) {
            source.unpipe(proxyReq);
            source.resume();
            proxyReq.destroy();
          }
        });
      }
      const template = proxyRes.headers[ROUTE_TEMPLATE_HEADER];
      if (template !== undefined) onRoute(req, String(template));
      const headers = answerHeaders(proxyRes.headers);
      proxyRes.on('close', () => {
        if (!proxyRes.complete && !res.destroyed) res.destroy();
      });
      proxyRes.on('error', (err) => {
        if (!res.destroyed) res.destroy(err);
        onError(err, req, res);
      });
      const status = proxyRes.statusCode ?? 502;
      if (proxyRes.statusMessage && req.httpVersionMajor < 2) res.statusMessage = proxyRes.statusMessage;
      const wait = out.beforeAnswer?.(status);
      if (!wait) streamAnswer(res, status, headers, proxyRes);
      else void wait.then(() => streamAnswer(res, status, headers, proxyRes));
    });
    if (out.body !== undefined) proxyReq.end(out.body);
    else if (out.held) out.held.pipe(proxyReq);
    // `complete` says the body was received, not read: a body that came with the headers is still to be piped.
    else req.pipe(proxyReq);
  };
}
