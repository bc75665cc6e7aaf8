import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeGraph } from '@svc/chat/testing';
import { connectNats } from '@svc/platform/events/nats';
import { createLogger } from '@svc/platform/logging';
import { createTestDatabase, eventually, randomSuffix, TEST_NATS_URL, TEST_REDIS_URL, type TestDatabase } from '@svc/platform/testing';
import { type Child, spawnEntry, waitReady } from './processes.js';
import { freePort } from './stack.js';

export type ServiceKind = 'crm' | 'tasks' | 'chat' | 'files' | 'webhooks';
export type Kind = ServiceKind | 'gateway';
export const SERVICE_KINDS: ServiceKind[] = ['crm', 'tasks', 'chat', 'files', 'webhooks'];

/** One process of the topology: a replica of a service or a gateway, on ports it keeps across restarts. */
export interface Replica {
  kind: Kind;
  name: string;
  httpPort: number;
  child: Child;
  /** kill -9, then waits for the process to be gone. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and waits until it is ready. */
  restart(): Promise<void>;
}

export interface Topology {
  /** The HAProxy frontend before the two gateways: what integrators call. */
  url: string;
  adminToken: string;
  env: Record<string, string>;
  db: TestDatabase;
  graph: FakeGraph;
  replicas: Record<Kind, Replica[]>;
  haproxyConfig: string;
  /** Every server of every backend as HAProxy sees it now. */
  servers(): Promise<ServerStat[]>;
  stop(): Promise<void>;
}

export interface ServerStat {
  /** The backend: a kind, or `crm_grpc` / `chat_grpc`. */
  backend: string;
  /** The replica's name, `crm-1`. */
  server: string;
  /** UP, DOWN, `UP 1/2`… */
  status: string;
  /** Connections it was given since HAProxy started. */
  sessions: number;
}

async function serverStats(statsUrl: string): Promise<ServerStat[]> {
  const text = await (await fetch(`${statsUrl};csv`)).text();
  const [head, ...lines] = text.trim().split('\n');
  const cols = head!.replace(/^# /, '').split(',');
  const at = (name: string) => cols.indexOf(name);
  return lines
    .map((l) => l.split(','))
    .filter((f) => f[at('svname')] !== 'FRONTEND' && f[at('svname')] !== 'BACKEND' && f[at('pxname')] !== 'stats')
    .map((f) => ({ backend: f[at('pxname')]!, server: f[at('svname')]!, status: f[at('status')]!, sessions: Number(f[at('stot')]) }));
}

export const HAPROXY = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy';

interface Backend {
  name: string;
  port: number;
  mode: 'http' | 'tcp';
  /** Traffic port and readiness (HTTP) port of each server. */
  servers: { name: string; port: number; checkPort: number }[];
}

/**
 * The HAProxy configuration of the topology. Servers are checked on /readyz (decision 0189: a service is ready
 * when its own database answers, a gateway once it listens); a connection refused by a server not yet marked
 * down is retried on the other one, so only requests already on a killed process can fail.
 */
export function haproxyConfig(backends: Backend[], statsPort: number): string {
  const out = [
    'global',
    '  maxconn 4096',
    'defaults',
    '  timeout connect 2s',
    '  timeout client 120s',
    '  timeout server 120s',
    '  timeout tunnel 1h',
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure',
    '  default-server inter 300ms fastinter 200ms downinter 500ms fall 2 rise 2',
    // A check connects within min(connect, inter) but may wait 2 s for /readyz's answer (each of its checks has 2 s,
    // decision 0189): on a loaded machine a slow answer is not a dead server, while a killed one refuses at once.
    '  timeout check 2s',
  ];
  // HAProxy's own view (server states, sessions per server), read by the tests as CSV.
  out.push('listen stats', '  mode http', `  bind 127.0.0.1:${statsPort}`, '  stats enable', '  stats uri /stats');
  for (const b of backends) {
    out.push(
      `listen ${b.name}`,
      `  mode ${b.mode}`,
      `  bind 127.0.0.1:${b.port}`,
      // gRPC connections are long-lived: the one with fewer of them takes a new one.
      `  balance ${b.mode === 'tcp' ? 'leastconn' : 'roundrobin'}`,
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      ...b.servers.map((s) => `  server ${s.name} 127.0.0.1:${s.port} check${s.checkPort === s.port ? '' : ` port ${s.checkPort}`}`),
    );
  }
  return `${out.join('\n')}\n`;
}

/** HAProxy in the foreground (-db) on the generated configuration, stopped by its PID. */
async function startHaproxy(configFile: string): Promise<{ proc: ChildProcess; output(): string; stop(): Promise<void> }> {
  const check = spawn(HAPROXY, ['-c', '-q', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let checkOut = '';
  check.stdout.on('data', (c) => (checkOut += c));
  check.stderr.on('data', (c) => (checkOut += c));
  const code = await new Promise<number | null>((r) => check.once('exit', r));
  if (code !== 0) throw new Error(`haproxy refuses the configuration:\n${checkOut}`);
  const proc = spawn(HAPROXY, ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (c) => (out += c));
  proc.stderr?.on('data', (c) => (out += c));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}

function replica(kind: Kind, name: string, entry: string, env: Record<string, string>, httpPort: number): Replica {
  const url = `http://127.0.0.1:${httpPort}`;
  const r: Replica = {
    kind,
    name,
    httpPort,
    child: spawnEntry(entry, env),
    kill: async () => void (await r.child.stop('SIGKILL')),
    restart: async () => {
      r.child = spawnEntry(entry, env);
      await ready(r, url);
    },
  };
  return r;
}

async function ready(r: Replica, url: string): Promise<void> {
  await Promise.race([
    waitReady(url, 120_000),
    r.child.exited.then((code) => {
      throw new Error(`${r.name} exited (${code}) before it was ready:\n${r.child.output()}`);
    }),
  ]);
}

/**
 * Two replicas of every service and two gateways sharing one Postgres database, the NATS server and Redis,
 * with HAProxy in front of the gateways and between the gateways and each service (HTTP), and before crm's
 * and chat's gRPC servers (TCP). Each process is its own Node process, so a test can kill -9 it.
 */
export async function startTopology(options: { chat?: Record<string, string> } = {}): Promise<Topology> {
  const run = randomSuffix();
  const db = await createTestDatabase();
  const graph = await new FakeGraph().start();
  const filesDir = await mkdtemp(join(tmpdir(), `topology-${run}-`));
  const port = async () => freePort();
  // Ports of HAProxy's frontends, known before any process starts (each process is told its peers' addresses).
  const lb = {
    gateway: await port(),
    crm: await port(),
    tasks: await port(),
    chat: await port(),
    files: await port(),
    webhooks: await port(),
    crmGrpc: await port(),
    chatGrpc: await port(),
    tasksGrpc: await port(),
    stats: await port(),
  };
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: TEST_NATS_URL,
    NATS_STREAM: `T_${run}`,
    EVENT_SUBJECT_PREFIX: `t${run}`,
    IDENTITY_TOKEN_SECRET: randomBytes(32).toString('hex'),
    DB_POOL_MAX: '5',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    CRM_GRPC_URL: `127.0.0.1:${lb.crmGrpc}`,
    CHAT_GRPC_URL: `127.0.0.1:${lb.chatGrpc}`,
    TASKS_GRPC_URL: `127.0.0.1:${lb.tasksGrpc}`,
    // Every process on one host: each metrics listener on a port of its own (decision 0190).
    METRICS_PORT: '0',
    FILES_PUBLIC_BASE_URL: `http://127.0.0.1:${lb.gateway}/public/files`,
  };
  const own: Record<ServiceKind, Record<string, string>> = {
    crm: {},
    tasks: {},
    files: { FILES_LOCAL_DIR: join(filesDir, 'files') },
    // Loopback receivers are refused unless the operator allows private networks.
    webhooks: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    chat: {
      WHATSAPP_GRAPH_URL: graph.baseUrl,
      WHATSAPP_ACCESS_TOKEN: graph.token,
      INSTAGRAM_GRAPH_URL: graph.baseUrl,
      INSTAGRAM_ACCESS_TOKEN: graph.token,
      SCHEDULED_FILES_DIR: join(filesDir, 'scheduled'),
      ...options.chat,
    },
  };
  const replicas = { gateway: [] } as unknown as Record<Kind, Replica[]>;
  const backends: Backend[] = [];
  const grpcPorts = {} as Record<ServiceKind, number[]>;
  for (const kind of SERVICE_KINDS) {
    replicas[kind] = [];
    grpcPorts[kind] = [];
    for (const i of [1, 2]) {
      const httpPort = await port();
      const grpcPort = await port();
      grpcPorts[kind].push(grpcPort);
      const e = { ...env, ...own[kind], HTTP_PORT: String(httpPort), GRPC_PORT: String(grpcPort) };
      replicas[kind].push(replica(kind, `${kind}-${i}`, `services/${kind}/src/main.ts`, e, httpPort));
    }
    backends.push({
      name: kind,
      port: lb[kind],
      mode: 'http',
      servers: replicas[kind].map((r) => ({ name: r.name, port: r.httpPort, checkPort: r.httpPort })),
    });
  }
  const grpcFront = { crm: lb.crmGrpc, chat: lb.chatGrpc, tasks: lb.tasksGrpc };
  for (const kind of ['crm', 'chat', 'tasks'] as const) {
    backends.push({
      name: `${kind}_grpc`,
      port: grpcFront[kind],
      mode: 'tcp',
      servers: replicas[kind].map((r, i) => ({ name: r.name, port: grpcPorts[kind][i]!, checkPort: r.httpPort })),
    });
  }
  const adminToken = randomBytes(24).toString('hex');
  for (const i of [1, 2]) {
    const httpPort = await port();
    const gatewayEnv = {
      PORT: String(httpPort),
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `t${run}:`,
      ADMIN_TOKEN: adminToken,
      IDENTITY_TOKEN_SECRET: env.IDENTITY_TOKEN_SECRET!,
      CRM_URL: `http://127.0.0.1:${lb.crm}`,
      TASKS_URL: `http://127.0.0.1:${lb.tasks}`,
      CHAT_URL: `http://127.0.0.1:${lb.chat}`,
      FILES_URL: `http://127.0.0.1:${lb.files}`,
      WEBHOOKS_URL: `http://127.0.0.1:${lb.webhooks}`,
      CRM_GRPC_URL: env.CRM_GRPC_URL!,
      LOG_LEVEL: env.LOG_LEVEL!,
      METRICS_PORT: '0',
    };
    replicas.gateway.push(replica('gateway', `gateway-${i}`, 'gateway/src/main.ts', gatewayEnv, httpPort));
  }
  backends.unshift({
    name: 'gateway',
    port: lb.gateway,
    mode: 'http',
    servers: replicas.gateway.map((r) => ({ name: r.name, port: r.httpPort, checkPort: r.httpPort })),
  });
  const config = haproxyConfig(backends, lb.stats);
  const statsUrl = `http://127.0.0.1:${lb.stats}/stats`;
  const servers = () => serverStats(statsUrl);
  const configFile = join(filesDir, 'haproxy.cfg');
  await writeFile(configFile, config);
  const haproxy = await startHaproxy(configFile);
  const all = Object.values(replicas).flat();
  const stop = async () => {
    await Promise.all(all.map((r) => r.child.stop()));
    await haproxy.stop();
    const nats = await connectNats(TEST_NATS_URL, 'test-cleanup', createLogger('test', 'silent'));
    await nats.jsm.streams.delete(env.NATS_STREAM!).catch(() => undefined);
    await nats.nc.close();
    await db.drop();
    await graph.stop();
    await rm(filesDir, { recursive: true, force: true });
  };
  try {
    await Promise.all(all.map((r) => ready(r, `http://127.0.0.1:${r.httpPort}`)));
    // Ready once HAProxy has seen every server pass its checks.
    await eventually(async () => {
      const all = await servers().catch(() => []);
      return all.length === backends.length * 2 && all.every((s) => s.status === 'UP');
    }, 60_000);
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
  return { url: `http://127.0.0.1:${lb.gateway}`, adminToken, env, db, graph, replicas, haproxyConfig: config, servers, stop };
}
