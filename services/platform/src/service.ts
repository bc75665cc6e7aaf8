import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { OpsServiceService } from '@svc/proto/platform/v1/ops';
import type { Express } from 'express';
import type { z } from 'zod';
import { ConfigError, loadConfig, type ServiceConfig, serviceConfigSchema } from './config.js';
import { createOrm, type DbDefinition, migrate, pingDatabase } from './db/orm.js';
import { connectNats, ensureEventStream, type Nats } from './events/nats.js';
import { OutboxEvent } from './events/outbox.entity.js';
import type { PlanGate } from './events/plan.js';
import { OutboxRelay } from './events/relay.js';
import { OutboxWriter } from './events/writer.js';
import { type GrpcServiceRegistration, type RunningGrpcServer, startGrpcServer, unary } from './grpc/server.js';
import { type ApiMount, createApiDispatcher } from './http/api.js';
import { createHttpApp, type ReadinessCheck } from './http/app.js';
import { answerClientErrors } from './http/client-error.js';
import type { EventContract } from './http/contract.js';
import { startMetricsServer } from './http/metrics-server.js';
import { type OpenApiFragment, serviceFragment } from './http/openapi.js';
import { IdentityVerifier, SERVICE_MAX_HEADER_SIZE } from './identity.js';
import { createLogger, type Logger } from './logging.js';
import { createMetrics, type Metrics } from './metrics.js';
import { servedInSpan, startTracing } from './tracing.js';

export type { DbDefinition };

export interface ServiceContext<C extends ServiceConfig = ServiceConfig> {
  name: string;
  schema: string;
  config: C;
  logger: Logger;
  metrics: Metrics;
  orm: MikroORM;
  nats: Nats;
  /** Decision 0090. */
  outbox: OutboxWriter;
}

export interface ServiceDefinition<S extends typeof serviceConfigSchema = typeof serviceConfigSchema, D = unknown> {
  name: string;
  configSchema?: S;
  /** Applied under the environment. */
  defaults?: Record<string, string>;
  db: DbDefinition;
  /** Built once; http, grpc and workers receive them. */
  setup?: (ctx: ServiceContext<z.infer<S>>) => D;
  http?: (ctx: ServiceContext<z.infer<S>>, deps: D) => (app: Express) => void;
  /** Mounted before `http`'s routes. */
  httpOwnBody?: (ctx: ServiceContext<z.infer<S>>, deps: D) => (app: Express) => void;
  /** Served without Express (decision 0014); unmatched paths go on to `http`'s app. */
  api?: (ctx: ServiceContext<z.infer<S>>, deps: D) => ApiMount[];
  /** The webhooks of the OpenAPI document. */
  events?: readonly EventContract[];
  grpc?: (ctx: ServiceContext<z.infer<S>>, deps: D) => GrpcServiceRegistration[];
  readiness?: (ctx: ServiceContext<z.infer<S>>, deps: D) => ReadinessCheck[];
  /** crm checks plans in SQL, every other service asks crm; without one every event is written. */
  plan?: PlanGate | ((ctx: ServiceContext<z.infer<S>>, deps: D) => PlanGate);
  /** Routes that carry their own signature (provider callbacks): tried first, body unread; true when taken. */
  unauthenticated?: (ctx: ServiceContext<z.infer<S>>, deps: D) => (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Returns how to stop it. */
  workers?: (ctx: ServiceContext<z.infer<S>>, deps: D) => Promise<() => Promise<void>>;
}

export interface RunningService<C extends ServiceConfig = ServiceConfig, D = unknown> {
  ctx: ServiceContext<C>;
  /** Tests reach a service's own state through them. */
  deps: D;
  httpPort: number;
  grpcPort: number;
  httpUrl: string;
  grpcAddress: string;
  /** Apart from the HTTP port. */
  metricsUrl: string;
  relay: OutboxRelay;
  stop(): Promise<void>;
}

export const platformEntities = [OutboxEvent];

export async function startService<S extends typeof serviceConfigSchema, D>(
  def: ServiceDefinition<S, D>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningService<z.infer<S>, D>> {
  const schemaOfConfig = (def.configSchema ?? serviceConfigSchema) as S;
  const config = loadConfig(schemaOfConfig, { ...def.defaults, ...env }) as z.infer<S>;
  const logger = createLogger(def.name, config.LOG_LEVEL);
  const metrics = createMetrics(def.name);
  const schema = def.db.schema;
  const tracing = startTracing(def.name, { endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, delayMs: config.OTEL_BSP_SCHEDULE_DELAY });

  const orm = await createOrm({
    url: config.DATABASE_URL,
    schema,
    entities: def.db.entities,
    migrations: def.db.migrations,
    poolMax: config.DB_POOL_MAX,
  });
  await migrate(orm, schema);
  const nats = await connectNats(config.NATS_URL, def.name, logger);
  await ensureEventStream(nats.jsm, config.NATS_STREAM, config.EVENT_SUBJECT_PREFIX);

  // Known once `setup` built the service's components.
  const { plan } = def;
  let gate: PlanGate = typeof plan === 'object' ? plan : { kind: 'none' };
  let gateKnown = typeof plan !== 'function';
  const outbox = new OutboxWriter(schema, () => {
    if (!gateKnown) throw new Error(`${def.name}: the outbox is used before setup returned (its plan gate comes from setup)`);
    return gate;
  });
  const ctx: ServiceContext<z.infer<S>> = {
    name: def.name,
    schema,
    config,
    logger,
    metrics,
    orm,
    nats,
    outbox,
  };

  const deps = def.setup ? def.setup(ctx) : (undefined as D);
  if (typeof plan === 'function') gate = plan(ctx, deps);
  gateKnown = true;
  const relay = new OutboxRelay({
    orm,
    js: nats.js,
    schema,
    subjectPrefix: config.EVENT_SUBJECT_PREFIX,
    logger,
    metrics,
    idleSweepMs: config.OUTBOX_SWEEP_MS,
    retentionHours: config.OUTBOX_RETENTION_HOURS,
    tracer: tracing?.tracer,
  });
  await relay.start();

  const grpcServer: RunningGrpcServer = await startGrpcServer(config.HOST, config.GRPC_PORT, [
    ...(def.grpc?.(ctx, deps) ?? []),
    {
      definition: OpsServiceService,
      implementation: {
        getOutboxStatus: unary(logger, async () => {
          const s = await relay.status();
          return {
            service: def.name,
            pending: s.pending,
            oldest_pending_age_ms: s.oldestPendingAgeMs,
            published_total: relay.publishedTotal,
          };
        }),
      },
    },
  ]);

  const readiness: ReadinessCheck[] = [
    { name: 'postgres', check: () => pingDatabase(orm) },
    {
      name: 'nats',
      required: false,
      check: async () => {
        if (nats.nc.isClosed() || nats.nc.isDraining()) throw new Error('closed');
        await nats.nc.flush();
      },
    },
    ...(def.readiness?.(ctx, deps) ?? []),
  ];
  const verifier = new IdentityVerifier(config.IDENTITY_TOKEN_SECRET);
  const mounts = def.api?.(ctx, deps) ?? [];
  let fragment: OpenApiFragment | undefined;
  const openapi = () => {
    fragment ??= documentedFragment(def.name, mounts, def.events ?? []);
    return fragment;
  };
  const app = createHttpApp({
    logger,
    metrics,
    verifier,
    readiness,
    openapi,
    mount: def.http?.(ctx, deps) ?? (() => undefined),
    mountOwnBody: def.httpOwnBody?.(ctx, deps),
  });
  const api = createApiDispatcher({ mounts, verifier, logger, metrics });
  const open = def.unauthenticated?.(ctx, deps);
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (open?.(req, res)) return;
    if (!api(req, res)) app(req, res);
  };
  const server: Server = createServer(
    { keepAliveTimeout: 65_000, maxHeaderSize: SERVICE_MAX_HEADER_SIZE },
    tracing ? servedInSpan(tracing.tracer, handle) : handle,
  );
  server.headersTimeout = 66_000;
  answerClientErrors(server, SERVICE_MAX_HEADER_SIZE);
  await new Promise<void>((resolve) => server.listen(config.HTTP_PORT, config.HOST, resolve));
  const httpPort = (server.address() as AddressInfo).port;
  const metricsServer = await startMetricsServer(config.HOST, config.METRICS_PORT, metrics.registry);

  const stopWorkers = (await def.workers?.(ctx, deps)) ?? (async () => undefined);
  grpcServer.health.setStatus('', 'SERVING');
  logger.info({ httpPort, grpcPort: grpcServer.port, metricsPort: metricsServer.port, schema }, 'service started');

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      grpcServer.health.setStatus('', 'NOT_SERVING');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE_MS);
      await Promise.all([closed, grpcServer.stop(config.SHUTDOWN_GRACE_MS), stopWorkers()]);
      clearTimeout(grace);
      await metricsServer.stop();
      await relay.stop();
      await nats.nc.drain().catch(() => undefined);
      await orm.close(true);
      await tracing?.stop();
      logger.info('service stopped');
    })();
    return stopping;
  };

  return {
    ctx,
    deps,
    httpPort,
    grpcPort: grpcServer.port,
    httpUrl: `http://${config.HOST}:${httpPort}`,
    grpcAddress: `${config.HOST}:${grpcServer.port}`,
    metricsUrl: metricsServer.url,
    relay,
    stop,
  };
}

/** Its contracts, and the routes registered without one. */
export function documentedFragment(service: string, mounts: readonly ApiMount[], events: readonly EventContract[]): OpenApiFragment {
  return serviceFragment(
    service,
    mounts.map(({ prefix, router }) => ({
      prefix,
      contracts: router.routes.flatMap((r) => (r.contract ? [r.contract] : [])),
      undocumented: router.routes.filter((r) => !r.contract).map((r) => `${r.method} ${r.path}`),
    })),
    events,
  );
}

/** Exits 1 on bad config; stops gracefully on SIGTERM or SIGINT. */
export async function runMain<S extends typeof serviceConfigSchema, D>(def: ServiceDefinition<S, D>): Promise<void> {
  let running: RunningService<z.infer<S>>;
  try {
    running = await startService(def);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${def.name}: ${err.message}`);
    } else {
      console.error(`${def.name}: failed to start:`, err);
    }
    process.exit(1);
  }
  const shutdown = (signal: string) => {
    running.ctx.logger.info({ signal }, 'shutting down');
    running.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/** Needs only DATABASE_URL. */
export async function migrateMain(def: Pick<ServiceDefinition, 'name' | 'db'>): Promise<void> {
  let url: string;
  try {
    url = loadConfig(serviceConfigSchema.pick({ DATABASE_URL: true }), process.env).DATABASE_URL;
  } catch (err) {
    console.error(`${def.name}: ${(err as Error).message}`);
    process.exit(1);
  }
  const orm = await createOrm({ url, schema: def.db.schema, entities: def.db.entities, migrations: def.db.migrations, poolMax: 2 });
  try {
    await migrate(orm, def.db.schema);
    const executed = await orm.migrator.getExecuted();
    console.log(JSON.stringify({ service: def.name, schema: def.db.schema, migrations: executed.length, msg: 'schema up to date' }));
  } finally {
    await orm.close(true);
  }
}
