import { env, tracingConfig } from '@svc/platform/config';
import { z } from 'zod';

export const gatewayConfigSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: env.port.default(8080),
  REDIS_URL: env.redisUrl,
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_-]*$/)
    .default('svc:'),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters'),
  IDENTITY_TOKEN_SECRET: env.secret,
  CRM_URL: env.httpUrl,
  TASKS_URL: env.httpUrl,
  CHAT_URL: env.httpUrl,
  FILES_URL: env.httpUrl,
  WEBHOOKS_URL: env.httpUrl,
  CRM_GRPC_URL: env.hostPort,
  /** Requests per minute per key when the key sets no rate_limit_per_minute. */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /**
   * How long a key look-up is reused. Keys changed through the admin API are dropped at once on every gateway
   * (decision 0120); this bounds a revocation whose broadcast was lost. At most 1 s.
   */
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(1000).default(500),
  /** The public satisfaction form: requests per minute per client address, and per token (decision 0082). */
  PUBLIC_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  PUBLIC_TOKEN_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  /** Signed file downloads (`/public/files`): requests per minute per client address (decision 0137). */
  PUBLIC_FILES_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  /** How often a service the gateway could not reach is asked whether it is back (decision 0189). */
  UPSTREAM_PROBE_MS: z.coerce.number().int().min(50).default(1000),
  /** A request body that sends nothing for this long is the client's timeout (408), well before the upstream's. */
  BODY_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  LOG_LEVEL: env.logLevel.default('info'),
  /** One info line per request (method, route, path, status, duration, key id, request id); `false` turns it off. */
  ACCESS_LOG: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  ...tracingConfig,
});
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
