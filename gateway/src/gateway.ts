import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { ConfigError, loadConfig } from '@svc/platform/config';
import { type ErrorKind, errorBody } from '@svc/platform/errors';
import { IdentitySigner } from '@svc/platform/identity';
import { createLogger } from '@svc/platform/logging';
import { createMetrics } from '@svc/platform/metrics';
import { startTracing } from '@svc/platform/tracing';
import { Redis } from 'ioredis';
import type { DestinationStream } from 'pino';
import { createGatewayApp } from './app.js';
import { type GatewayConfig, gatewayConfigSchema } from './config.js';
import { KeyAuthenticator } from './keys.js';
import { KeyRateLimiter } from './rate-limit.js';
import { KeyRevocations } from './revocations.js';

export interface RunningGateway {
  url: string;
  port: number;
  config: GatewayConfig;
  stop(): Promise<void>;
}

/** `logDestination`: where the log lines go (stdout when unset; tests read them). */
export async function startGateway(env: NodeJS.ProcessEnv = process.env, logDestination?: DestinationStream): Promise<RunningGateway> {
  const config = loadConfig(gatewayConfigSchema, env);
  const logger = createLogger('gateway', config.LOG_LEVEL, logDestination);
  const metrics = createMetrics('gateway');
  const tracing = startTracing('gateway', { endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, delayMs: config.OTEL_BSP_SCHEDULE_DELAY });
  const redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  await redis.connect();
  const signer = new IdentitySigner(config.IDENTITY_TOKEN_SECRET);
  const keys = new KeyAuthenticator(config.CRM_GRPC_URL, config.KEY_CACHE_TTL_MS, signer);
  const limiter = new KeyRateLimiter(redis, config.REDIS_KEY_PREFIX, config.RATE_LIMIT_PER_MINUTE);
  const revocations = new KeyRevocations(redis, new Redis(config.REDIS_URL, { lazyConnect: true }), config.REDIS_KEY_PREFIX, keys, logger);
  await revocations.start();
  const server: Server = createServer(
    { keepAliveTimeout: 65_000 },
    createGatewayApp({ config, logger, metrics, redis, keys, limiter, signer, revocations, tracer: tracing?.tracer }),
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket));
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'gateway started');
  return {
    url: `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`,
    port,
    config,
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), 10_000);
      await closed;
      clearTimeout(grace);
      keys.close();
      revocations.close();
      redis.disconnect();
      await tracing?.stop();
    },
  };
}

/**
 * What Node's HTTP parser refuses before any handler runs (a request line or headers over its 16 KB limit, a
 * malformed request, headers that never finish) is answered in the API's error body like everything else, instead
 * of Node's bare status line (decision 0122). A socket that can no longer be written is only closed.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const kind: ErrorKind =
    err.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'invalid';
  const message =
    kind === 'headers_too_large'
      ? 'The request line and headers exceed 16 KB'
      : kind === 'request_timeout'
        ? 'The request took too long to arrive'
        : 'Malformed HTTP request';
  const body = errorBody(kind, message);
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${body.statusCode} ${body.error}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

export { ConfigError };
