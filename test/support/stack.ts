import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatService } from '@svc/chat';
import { crmService } from '@svc/crm';
import { filesService } from '@svc/files';
import { type RunningGateway, startGateway } from '@svc/gateway';
import { connectNats } from '@svc/platform/events/nats';
import { createLogger } from '@svc/platform/logging';
import { type RunningService, startService } from '@svc/platform/service';
import { createTestDatabase, randomSuffix, TEST_NATS_URL, TEST_REDIS_URL, type TestDatabase } from '@svc/platform/testing';
import { tasksService } from '@svc/tasks';
import { webhooksService } from '@svc/webhooks';
import { type Child, spawnEntry, waitReady } from './processes.js';

export interface Stack {
  gatewayUrl: string;
  adminToken: string;
  env: Record<string, string>;
  gatewayEnv: Record<string, string>;
  db: TestDatabase;
  /** Services running in this process (undefined for those run as processes). */
  services: { crm: RunningService } & Partial<Record<Exclude<ServiceName, 'crm'>, RunningService>>;
  processes: Partial<Record<ServiceName, ServiceProcess>>;
  gateway: RunningGateway;
  stop(): Promise<void>;
}

/**
 * The whole system in this process against the real Postgres, NATS and Redis: a fresh database, a
 * stream and subject prefix of this run only, every service on port 0 and the gateway in front.
 */
type ServiceName = 'crm' | 'tasks' | 'chat' | 'files' | 'webhooks';

export interface StackOptions {
  /** Environment of every service and the gateway, over the defaults (tracing's, say). */
  all?: Record<string, string>;
  gateway?: Record<string, string>;
  /** Environment of the webhooks service, over the defaults (which allow deliveries to loopback receivers). */
  webhooks?: Record<string, string>;
  /** Environment of the tasks service, over the defaults. */
  tasks?: Record<string, string>;
  /** Environment of the files service, over the defaults (a local storage directory of this run). */
  files?: Record<string, string>;
  /** Environment of the chat service, over the defaults (the fake Graph server's URL and token). */
  chat?: Record<string, string>;
  /** Services run as their own processes (so a test can kill them); the others run in this process. */
  processes?: Exclude<ServiceName, 'crm'>[];
  /** NATS of this stack instead of TEST_NATS_URL (a fault test's own nats-server, which it restarts). */
  natsUrl?: string;
  /** The Postgres server the stack's database is made on instead of TEST_DATABASE_URL's (a fault test's own). */
  postgresUrl?: string;
}

/** Ports already handed out: a port is chosen before its process binds it, so the next choice must not take it. */
const handedOut = new Set<number>();

/**
 * A free TCP port on loopback, for a child process that must keep its address across restarts. Chosen below the
 * ephemeral range (32768–60999): a port the kernel hands out for port 0 may be given to an outgoing connection
 * before the child binds it (EADDRINUSE under load), one below that range never is.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = net.createServer();
    const bound = await new Promise<boolean>((r) => {
      server.once('error', () => r(false));
      server.listen(port, '127.0.0.1', () => r(true));
    });
    if (!bound) continue;
    await new Promise((r) => server.close(r));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('no free port between 20000 and 32000 on 127.0.0.1');
}

export interface ServiceProcess {
  httpUrl: string;
  /** Where its /metrics is served (a port of its own, decision 0190). */
  metricsUrl: string;
  child: Child;
  /** The environment it runs with, its ports aside (for a test that starts another replica). */
  env: Record<string, string>;
  /** Starts the process again on the same ports (after a kill). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function spawnService(name: ServiceName, env: Record<string, string>): Promise<ServiceProcess> {
  // A port the stack chose before (chat's gRPC port, which crm is told at its start) is kept.
  const grpcPort = env.GRPC_PORT && env.GRPC_PORT !== '0' ? env.GRPC_PORT : String(await freePort());
  const ports = { HTTP_PORT: String(await freePort()), GRPC_PORT: grpcPort, METRICS_PORT: String(await freePort()) };
  const httpUrl = `http://127.0.0.1:${ports.HTTP_PORT}`;
  const handle: ServiceProcess = {
    httpUrl,
    metricsUrl: `http://127.0.0.1:${ports.METRICS_PORT}`,
    env,
    child: spawnEntry(`services/${name}/src/main.ts`, { ...env, ...ports }),
    restart: async () => {
      handle.child = spawnEntry(`services/${name}/src/main.ts`, { ...env, ...ports });
      await waitReady(httpUrl);
    },
    stop: async () => void (await handle.child.stop()),
  };
  await waitReady(httpUrl);
  return handle;
}

export async function startStack(overrides: StackOptions = {}): Promise<Stack> {
  const run = randomSuffix();
  const natsUrl = overrides.natsUrl ?? TEST_NATS_URL;
  const db = await createTestDatabase(undefined, overrides.postgresUrl);
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: natsUrl,
    NATS_STREAM: `T_${run}`,
    EVENT_SUBJECT_PREFIX: `t${run}`,
    IDENTITY_TOKEN_SECRET: randomBytes(32).toString('hex'),
    HTTP_PORT: '0',
    GRPC_PORT: '0',
    METRICS_PORT: '0',
    DB_POOL_MAX: '5',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...overrides.all,
  };
  // crm asks chat for the chat fields of the lead detail and tasks for its task count, and both start after crm:
  // their gRPC ports are chosen first.
  const chatGrpcPort = String(await freePort());
  const tasksGrpcPort = String(await freePort());
  const crm = await startService(crmService, {
    ...env,
    CHAT_GRPC_URL: `127.0.0.1:${chatGrpcPort}`,
    TASKS_GRPC_URL: `127.0.0.1:${tasksGrpcPort}`,
  });
  // The gateway's port is chosen first: signed file URLs (files, webhooks) point at its public download route.
  const gatewayPort = await freePort();
  const peerEnv = {
    ...env,
    CRM_GRPC_URL: crm.grpcAddress,
    FILES_PUBLIC_BASE_URL: `http://127.0.0.1:${gatewayPort}/public/files`,
  };
  const filesDir = await mkdtemp(join(tmpdir(), `files-${run}-`));
  // Test receivers listen on 127.0.0.1, which the webhooks service refuses unless the operator allows it.
  const webhooksEnv = { ...peerEnv, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...overrides.webhooks };
  const tasksEnv = { ...peerEnv, GRPC_PORT: tasksGrpcPort, ...overrides.tasks };
  const chatEnv = { ...peerEnv, GRPC_PORT: chatGrpcPort, ...overrides.chat };
  const filesEnv = { ...peerEnv, FILES_LOCAL_DIR: filesDir, ...overrides.files };
  const spawned = new Set(overrides.processes ?? []);
  const processes: Partial<Record<ServiceName, ServiceProcess>> = {};
  const inProcess = async <N extends Exclude<ServiceName, 'crm'>>(name: N, start: () => Promise<RunningService>) => {
    if (!spawned.has(name)) return start();
    const own =
      name === 'webhooks' ? webhooksEnv : name === 'tasks' ? tasksEnv : name === 'chat' ? chatEnv : name === 'files' ? filesEnv : peerEnv;
    processes[name] = await spawnService(name, { ...own, LOG_LEVEL: 'warn' });
    return undefined;
  };
  const [tasks, chat, files, webhooks] = await Promise.all([
    inProcess('tasks', () => startService(tasksService, tasksEnv)),
    inProcess('chat', () => startService(chatService, chatEnv)),
    inProcess('files', () => startService(filesService, filesEnv)),
    inProcess('webhooks', () => startService(webhooksService, webhooksEnv)),
  ]);
  const urlOf = (name: Exclude<ServiceName, 'crm'>, s: RunningService | undefined) => s?.httpUrl ?? processes[name]!.httpUrl;
  const adminToken = randomBytes(24).toString('hex');
  const gatewayEnv: Record<string, string> = {
    PORT: String(gatewayPort),
    METRICS_PORT: '0',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `t${run}:`,
    ADMIN_TOKEN: adminToken,
    IDENTITY_TOKEN_SECRET: env.IDENTITY_TOKEN_SECRET!,
    CRM_URL: crm.httpUrl,
    TASKS_URL: urlOf('tasks', tasks),
    CHAT_URL: urlOf('chat', chat),
    FILES_URL: urlOf('files', files),
    WEBHOOKS_URL: urlOf('webhooks', webhooks),
    CRM_GRPC_URL: crm.grpcAddress,
    LOG_LEVEL: env.LOG_LEVEL!,
    ...overrides.all,
    ...overrides.gateway,
  };
  const services = { crm, tasks, chat, files, webhooks };
  const running = [tasks, chat, files, webhooks].filter((s): s is RunningService => s !== undefined);
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(gatewayEnv);
  } catch (err) {
    // A stack that cannot be completed leaves no process behind (a test's `after` never sees it).
    await Promise.all([...running.map((s) => s.stop()), ...Object.values(processes).map((p) => p.stop())]);
    await crm.stop();
    throw err;
  }
  return {
    gatewayUrl: gateway.url,
    adminToken,
    env,
    gatewayEnv,
    db,
    services,
    processes,
    gateway,
    stop: async () => {
      await gateway.stop();
      await Promise.all([...running.map((s) => s.stop()), ...Object.values(processes).map((p) => p.stop())]);
      await crm.stop();
      const nats = await connectNats(natsUrl, 'test-cleanup', createLogger('test', 'silent'));
      await nats.jsm.streams.delete(env.NATS_STREAM!).catch(() => undefined);
      await nats.nc.close();
      await db.drop();
      await rm(filesDir, { recursive: true, force: true });
    },
  };
}
