import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, loadConfig } from '@svc/platform/config';
import { answerClientErrors } from '@svc/platform/http/client-error';
import { startMetricsServer } from '@svc/platform/http/metrics-server';
import { GATEWAY_MAX_HEADER_SIZE, IdentitySigner } from '@svc/platform/identity';
import { createLogger } from '@svc/platform/logging';
import { startTracing } from '@svc/platform/tracing';
import { Redis } from 'ioredis';
import type { DestinationStream } from 'pino';
import { createGatewayApp } from './app.js';
import { type GatewayConfig, gatewayConfigSchema } from './config.js';
import { KeyAuthenticator } from './keys.js';
import { KeyRateLimiter } from './rate-limit.js';
import { createGatewayMetrics } from './request-metrics.js';
import { KeyRevocations } from './revocations.js';

export interface RunningGateway {
  url: string;
  port: number;
  metricsUrl: string;
  config: GatewayConfig;
  stop(): Promise<void>;
}

export async function startGateway(env: NodeJS.ProcessEnv = process.env, logDestination?: DestinationStream): Promise<RunningGateway> {
  const config = loadConfig(gatewayConfigSchema, env);
  const logger = createLogger('gateway', config.LOG_LEVEL, logDestination);
  const metrics = createGatewayMetrics();
  const tracing = startTracing('gateway', { endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, delayMs: config.OTEL_BSP_SCHEDULE_DELAY });
  const redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  await redis.connect();
  const signer = new IdentitySigner(config.IDENTITY_TOKEN_SECRET);
  const keys = new KeyAuthenticator(config.CRM_GRPC_URL, config.KEY_CACHE_TTL_MS, signer);
  const limiter = new KeyRateLimiter(redis, config.REDIS_KEY_PREFIX, config.RATE_LIMIT_PER_MINUTE);
  const revocations = new KeyRevocations(redis, new Redis(config.REDIS_URL, { lazyConnect: true }), config.REDIS_KEY_PREFIX, keys, logger);
  await revocations.start();
  const server: Server = createServer(
    {
      keepAliveTimeout: 65_000,
      maxHeaderSize: GATEWAY_MAX_HEADER_SIZE,
      // Slow headers are the client's (decision 0151); checked every second rather than Node's default.
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      requestTimeout: config.BODY_TIMEOUT_MS + config.HEADERS_TIMEOUT_MS + config.BODY_RATE_WINDOW_MS,
      connectionsCheckingInterval: 1000,
    },
    createGatewayApp({ config, logger, metrics, redis, keys, limiter, signer, revocations, tracer: tracing?.tracer }),
  );
  // Services accept more, for the identity the gateway adds (decision 0153).
  answerClientErrors(server, GATEWAY_MAX_HEADER_SIZE);
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  const port = (server.address() as AddressInfo).port;
  const metricsServer = await startMetricsServer(config.HOST, config.METRICS_PORT, metrics.registry);
  logger.info({ port, metricsPort: metricsServer.port }, 'gateway started');
  return {
    url: `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`,
    port,
    metricsUrl: metricsServer.url,
    config,
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), 10_000);
      await closed;
      clearTimeout(grace);
      await metricsServer.stop();
      keys.close();
      revocations.close();
      await limiter.flush();
      redis.disconnect();
      await tracing?.stop();
    },
  };
}

export { ConfigError };
