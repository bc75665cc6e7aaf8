import { env, tracingConfig } from '@svc/platform/config';
import { z } from 'zod';
import { trustedProxies } from './client-address.js';

export const gatewayConfigSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: env.port.default(8080),
  /** Off the public path (decision 0190); 0 = any free port. */
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
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** Bounds a revocation whose broadcast was lost (decision 0120). */
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(1000).default(500),
  /** Per client address, and per token (decision 0082). */
  PUBLIC_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  PUBLIC_TOKEN_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  PUBLIC_FILES_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(300),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  UPSTREAM_PROBE_MS: z.coerce.number().int().min(50).default(1000),
  BODY_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** What one slow client may hold (decision 0151). */
  BODY_TIMEOUT_MS: z.coerce.number().int().min(100).default(120_000),
  BODY_MIN_BYTES_PER_SECOND: z.coerce.number().int().min(0).default(1024),
  BODY_RATE_WINDOW_MS: z.coerce.number().int().min(100).default(5000),
  BODY_BUFFER_BYTES: z.coerce.number().int().min(0).default(65_536),
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  KEY_MAX_IN_FLIGHT: z.coerce.number().int().min(1).default(64),
  UPSTREAM_MAX_SOCKETS: z.coerce.number().int().min(1).default(512),
  /** Comma-separated addresses or CIDRs; none by default, so the TCP peer is the client (decision 0152). */
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
  TRUSTED_PROXY_HEADER: z.enum(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'),
  LOG_LEVEL: env.logLevel.default('info'),
  ACCESS_LOG: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  ...tracingConfig,
});
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
