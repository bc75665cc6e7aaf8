import type http from 'node:http';
import { PassThrough } from 'node:stream';
import { errorBody } from '@svc/platform/errors';
import type { Logger } from '@svc/platform/logging';
import type { GatewayConfig } from './config.js';

export const WATCHED = Symbol('bodyWatched');
export const HELD = Symbol('heldBody');

/** What the gateway learnt about a request's body before it is forwarded. */
export type SlowRequest = http.IncomingMessage & { [WATCHED]?: true; [HELD]?: PassThrough };

type Config = Pick<
  GatewayConfig,
  'BODY_MIN_BYTES_PER_SECOND' | 'BODY_RATE_WINDOW_MS' | 'BODY_IDLE_TIMEOUT_MS' | 'BODY_TIMEOUT_MS' | 'BODY_BUFFER_BYTES'
>;

/** The client's body, watched for stalls and held back until it arrived (decision 0151). */
export function slowBodies(config: Config, logger: Logger, idOf: (res: http.ServerResponse) => string | undefined) {
  // A stalled or too slow body is the client's timeout: 408, which closes the connection (decision 0151).
  const minPerWindow = Math.ceil((config.BODY_MIN_BYTES_PER_SECOND * config.BODY_RATE_WINDOW_MS) / 1000);
  const watchBody = (req: SlowRequest, res: http.ServerResponse) => {
    req[WATCHED] = true;
    const cut = (reason: string) => {
      logger.info({ method: req.method, path: req.url?.split('?')[0], reason, request_id: idOf(res) }, 'request body too slow');
      const body = JSON.stringify(errorBody('request_timeout', `body: ${reason}`));
      if (res.headersSent) req.destroy();
      else res.writeHead(408, { 'content-type': 'application/json; charset=utf-8', connection: 'close' }).end(body, () => req.destroy());
    };
    req.setTimeout(config.BODY_IDLE_TIMEOUT_MS, () => {
      if (!req.complete) cut(`nothing received for ${config.BODY_IDLE_TIMEOUT_MS} ms`);
    });
    const deadline = Date.now() + config.BODY_TIMEOUT_MS;
    // Counted on the socket so no listener changes the flow; a window where the gateway stopped reading is not held
    // against the client.
    let windowStart = req.socket.bytesRead;
    let excused = false;
    const onPause = () => {
      excused = true;
    };
    req.on('pause', onPause);
    let timer: NodeJS.Timeout;
    const check = () => {
      if (req.complete || req.destroyed) return;
      const now = Date.now();
      if (now >= deadline) return cut(`not complete within ${config.BODY_TIMEOUT_MS} ms`);
      const read = req.socket.bytesRead - windowStart;
      if (!excused && read < minPerWindow) return cut(`slower than ${config.BODY_MIN_BYTES_PER_SECOND} bytes per second`);
      windowStart = req.socket.bytesRead;
      excused = req.isPaused();
      timer = setTimeout(check, Math.min(config.BODY_RATE_WINDOW_MS, deadline - now));
    };
    timer = setTimeout(check, Math.min(config.BODY_RATE_WINDOW_MS, config.BODY_TIMEOUT_MS));
    const done = () => {
      clearTimeout(timer);
      req.setTimeout(0);
      req.off('pause', onPause);
    };
    req.once('end', done);
    req.once('close', done);
  };

  // No connection to a service is spent on a body that has not arrived (decision 0151).
  const holdBody = (req: SlowRequest, send: () => void) => {
    const declared = Number(req.headers['content-length']);
    const whole = req.headers['transfer-encoding'] === undefined && declared <= config.BODY_BUFFER_BYTES;
    const chunks: Buffer[] = [];
    let started = false;
    const go = () => {
      if (started) return;
      started = true;
      req.off('data', onData);
      req.off('end', go);
      req.pause();
      const body = new PassThrough();
      for (const chunk of chunks) body.write(chunk);
      if (req.readableEnded) body.end();
      else req.pipe(body);
      req[HELD] = body;
      send();
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      if (!whole) go();
    };
    req.on('data', onData);
    req.once('end', go);
  };
  return { watchBody, holdBody };
}
