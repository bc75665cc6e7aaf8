import { env, tracingConfig } from '@svc/platform/config';
import { z } from 'zod';
import { trustedProxies } from './client-address.js';

export const gatewayConfigSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: env.port.default(8080),
  /** /metrics, on a port of its own off the public path (decision 0190); 0 = any free port (tests). */
  METRICS_PORT: env.port.default(9180),
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
   * (decision 0120); this bounds a revocation whose broadcast was lost.
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
  /** What one slow client may hold (decision 0151): a body must arrive whole within this (408 otherwise)... */
  BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(120_000),
  /** ...and send at least this many bytes in every window of BODY_RATE_WINDOW_MS until it is complete. */
  BODY_MIN_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(1024),
  BODY_RATE_WINDOW_MS: z.coerce.number().int().min(100).default(5000),
  /** A body declared this long or shorter is received whole before the service is asked; a longer one streams. */
  BODY_BUFFER_BYTES: z.coerce.number().int().min(0).default(65_536),
  /** The request line and headers must arrive within this (408 otherwise). */
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Requests of one key in flight at once on this gateway process; one more is a 429. */
  KEY_MAX_IN_FLIGHT: z.coerce.number().int().min(1).default(64),
  /** Connections of the gateway process to each service. */
  UPSTREAM_MAX_SOCKETS: z.coerce.number().int().min(1).default(512),
  /**
   * The proxies in front of the gateway whose forwarded client address is believed (decision 0152): addresses or
   * CIDRs, comma-separated; none by default, so the TCP peer is the client.
   */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((v, ctx) => {
      try {
        return trustedProxies(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `must list addresses or CIDRs (${(err as Error).message})` });
        return z.NEVER;
      }
    }),
  /** The header those proxies write the client's address in. */
  TRUSTED_PROXY_HEADER: z.enum(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'),
  LOG_LEVEL: env.logLevel.default('info'),
  /** One info line per request (method, route, path, status, duration, key id, client address, request id); `false` turns it off. */
  ACCESS_LOG: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  ...tracingConfig,
});
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
