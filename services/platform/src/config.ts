import { z } from 'zod';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/** Every problem names its variable, so a bad value stops the process with a message an operator can act on. */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(environment)';
    const value = env[String(issue.path[0])];
    return value === undefined ? `${name}: is required but not set` : `${name}: ${issue.message}`;
  });
  throw new ConfigError(problems);
}

const port = z.coerce.number().int().min(0).max(65535);
const url = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL with scheme ${protocols.join(' or ')}`,
  );

export const env = {
  port,
  postgresUrl: url(['postgres:', 'postgresql:']),
  natsUrl: z.string().regex(/^(nats:\/\/)?[^\s/]+:\d+(,(nats:\/\/)?[^\s/]+:\d+)*$/, 'must be host:port or nats://host:port'),
  redisUrl: url(['redis:', 'rediss:']),
  httpUrl: url(['http:', 'https:']),
  hostPort: z.string().regex(/^[^\s/:]+:\d+$/, 'must be host:port'),
  secret: z.string().min(32, 'must be at least 32 characters'),
  identifier: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be a lower-case identifier'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
};

/** Exported over OTLP/HTTP when set, off when unset (decision 0200). */
export const tracingConfig = {
  OTEL_EXPORTER_OTLP_ENDPOINT: env.httpUrl.optional(),
  /** Milliseconds. */
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).default(5000),
};

/** A service extends this with its own. */
export const serviceConfigSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  HTTP_PORT: port,
  GRPC_PORT: port,
  /** Off the public path (decision 0190); 0 = any free port. */
  METRICS_PORT: port,
  DATABASE_URL: env.postgresUrl,
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  NATS_URL: env.natsUrl,
  NATS_STREAM: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('EVENTS'),
  EVENT_SUBJECT_PREFIX: z
    .string()
    .regex(/^[a-z0-9_-]+$/)
    .default('events'),
  IDENTITY_TOKEN_SECRET: env.secret,
  LOG_LEVEL: env.logLevel.default('info'),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /** Kept for replay, then deleted by the relay. */
  OUTBOX_RETENTION_HOURS: z.coerce.number().int().min(1).default(168),
  /** Finds events no commit of this process announced; its own commits wake the relay at once (decision 0033). */
  OUTBOX_SWEEP_MS: z.coerce.number().int().min(1).default(1000),
  ...tracingConfig,
});
export type ServiceConfig = z.infer<typeof serviceConfigSchema>;
