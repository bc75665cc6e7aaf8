import http from 'node:http';
import type { Readable } from 'node:stream';
import { hasBody } from '@svc/platform/http/body';
import { ROUTE_TEMPLATE_HEADER } from '@svc/platform/http/route-template';
import { IDENTITY_HEADER } from '@svc/platform/identity';

/**
 * The gateway's proxy hop on bare node:http (decision 0243): what http-proxy-middleware and httpxy did for the
 * gateway's options (`xfwd`, `proxyTimeout`, no path rewrite, no redirects), without their promises, events and
 * per-request option objects.
 */
export interface ForwardTarget {
  agent: http.Agent;
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
  /** The response is written by the caller once it is ready (revocations, decision 0120). */
  respond?: (proxyRes: http.IncomingMessage, headers: http.OutgoingHttpHeaders) => void;
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
const PORT = /:(\d+)/;
const TRANSFER_ENCODING_TOKEN = /(^|,)\s*transfer-encoding\s*($|,)/i;

function destroyOnTimeout(this: http.ClientRequest): void {
  this.destroy();
}

export function forwardTo(target: ForwardTarget): (req: http.IncomingMessage, res: http.ServerResponse, out: Outgoing) => void {
  const { agent, timeoutMs, onError, onRoute } = target;
  const hostname = target.url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = target.url.port || '80';
  const prefix = target.url.pathname === '/' ? '' : target.url.pathname.replace(/\/$/, '');

  return (req, res, out) => {
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    delete headers.authorization;
    headers[IDENTITY_HEADER] = out.identity;
    // As httpxy's `xfwd`: the client's own values are kept, the gateway's added only where none came.
    const host = req.headers.host;
    headers['x-forwarded-for'] ||= req.socket.remoteAddress;
    headers['x-forwarded-port'] ||= (host && PORT.exec(host)?.[1]) || '80';
    headers['x-forwarded-proto'] ||= 'http';
    headers['x-forwarded-host'] ||= host ?? '';
    const method = req.method ?? 'GET';
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
    const url = req.url ?? '/';
    const path = url[0] === '/' ? prefix + url : `${prefix}/${url}`;
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
      const headers: http.OutgoingHttpHeaders = {};
      // Node frames the body itself (chunked, or the service's content-length) for the client's HTTP version.
      for (const key in proxyRes.headers) {
        const value = proxyRes.headers[key];
        if (value !== undefined && !DROPPED.has(key)) headers[key] = value;
      }
      proxyRes.on('close', () => {
        if (!proxyRes.complete && !res.destroyed) res.destroy();
      });
      proxyRes.on('error', (err) => {
        if (!res.destroyed) res.destroy(err);
        onError(err, req, res);
      });
      if (out.respond) return out.respond(proxyRes, headers);
      if (proxyRes.statusMessage && req.httpVersionMajor < 2) res.statusMessage = proxyRes.statusMessage;
      res.writeHead(proxyRes.statusCode ?? 502, headers);
      proxyRes.pipe(res);
    });
    if (out.body !== undefined) proxyReq.end(out.body);
    else if (out.held) out.held.pipe(proxyReq);
    // `complete` says the body was received, not read: a body that came with the headers is still to be piped.
    else if (!hasBody(req)) proxyReq.end();
    else req.pipe(proxyReq);
  };
}
