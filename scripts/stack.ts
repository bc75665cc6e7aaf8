/**
 * The whole system as separate processes on this machine: the five services and the gateway, each a
 * child process (`node --import tsx <main.ts>`) with its JSON logs in `<logDir>/<name>.log`. Used by
 * `npm start` and the benchmark. Postgres, NATS and Redis are not started here: pass their URLs.
 */
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ConsoleSink, consoleLine, defaultConsoleSink, delay, type ExitInfo, ManagedProcess, pinoClassifier } from './processes.js';
import { DEFAULT_RESTART_POLICY, type RestartPolicy, Supervisor } from './supervisor.js';

export const SERVICE_NAMES = ['crm', 'tasks', 'chat', 'files', 'webhooks'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
export type ProcessName = ServiceName | 'gateway';

export interface ServicePorts {
  http: number;
  grpc: number;
  /** GET /metrics (METRICS_PORT); a free port when not given. */
  metrics?: number;
}

/** The ports each service uses when nothing else is said (also the services' own defaults). */
export const DEFAULT_SERVICE_PORTS: Readonly<Record<ServiceName, ServicePorts>> = {
  crm: { http: 8081, grpc: 9081, metrics: 9181 },
  tasks: { http: 8082, grpc: 9082, metrics: 9182 },
  chat: { http: 8083, grpc: 9083, metrics: 9183 },
  files: { http: 8084, grpc: 9084, metrics: 9184 },
  webhooks: { http: 8085, grpc: 9085, metrics: 9185 },
};
export const DEFAULT_GATEWAY_PORT = 8080;
export const DEFAULT_GATEWAY_METRICS_PORT = 9180;

/** The repository root (this file lives in `<root>/scripts`). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface StackOptions {
  databaseUrl: string;
  /** host:port (or a comma-separated list) of a NATS server with JetStream. */
  natsUrl: string;
  redisUrl: string;
  /** At least 16 characters. */
  adminToken: string;
  /** At least 32 characters; shared by every service and the gateway. */
  identityTokenSecret: string;
  /** Repository root; defaults to the parent of this scripts folder. */
  root?: string;
  /** Interface everything listens on. Default 127.0.0.1. */
  host?: string;
  /** Gateway port; 0 picks a free port below 32768. Default 8080. */
  gatewayPort?: number;
  /**
   * Service ports: 'default' (8081..8085 HTTP, 9081..9085 gRPC), 'free' (free ports below 32768, for
   * a second stack next to a running one) or explicit ports per service (others default).
   */
  servicePorts?: 'default' | 'free' | Partial<Record<ServiceName, ServicePorts>>;
  natsStream?: string;
  eventSubjectPrefix?: string;
  redisKeyPrefix?: string;
  logLevel?: string;
  rateLimitPerMinute?: number;
  dbPoolMax?: number;
  /**
   * WEBHOOK_ALLOW_PRIVATE_NETWORKS of the webhooks service, passed only when given: an operator setting that
   * lets deliveries reach loopback and private addresses (a receiver on this machine); the service's default is off.
   */
  webhookAllowPrivateNetworks?: string;
  /** Extra environment for every child, and per child (applied last). */
  env?: Record<string, string>;
  processEnv?: Partial<Record<ProcessName, Record<string, string>>>;
  /** Where the per-process log files go. Default `<root>/.data/logs`. */
  logDir?: string;
  /** How long each process may take to answer 200 on /readyz. Default 90 s. */
  readyTimeoutMs?: number;
  /** How long stop() waits after SIGTERM before SIGKILL. Default 15 s. */
  stopGraceMs?: number;
  /** Where warnings and errors of the children go (one prefixed line each). Default stderr. */
  consoleSink?: ConsoleSink;
  /** A child exited while the stack was up and nobody asked it to: it is started again after `delayMs`. */
  onRestart?: (name: ProcessName, info: ExitInfo, attempt: number, delayMs: number, logFile: string) => void;
  /** A child kept exiting (more restarts than the policy allows within its window): it stays down. */
  onUnexpectedExit?: (name: ProcessName, info: ExitInfo, logFile: string) => void;
  /** How crashed children are restarted. Default DEFAULT_RESTART_POLICY. */
  restartPolicy?: RestartPolicy;
  /** Aborting while the stack starts stops what has started and rejects. */
  signal?: AbortSignal;
}

export interface Stack {
  gatewayUrl: string;
  adminToken: string;
  /** HTTP base URL of each service. */
  serviceUrls: Record<ServiceName, string>;
  /** Where each process answers GET /metrics (its METRICS_PORT). */
  metricsUrls: Record<ProcessName, string>;
  /** host:port of each service's gRPC server. */
  grpcAddresses: Record<ServiceName, string>;
  /** PID of each child process (of its latest start, after a restart). */
  pids: Record<ProcessName, number>;
  logDir: string;
  /** The environment each child was started with. */
  env: Record<ProcessName, Record<string, string>>;
  /** SIGTERM to every child (gateway first), wait, SIGKILL stragglers; resolves when all have exited. */
  stop(): Promise<void>;
}

export class StackError extends Error {
  override name = 'StackError';
}

/** Whether host:port can be bound right now. */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A free port at or above `from` and below 32768 (the ephemeral range above it can collide with
 * outgoing connections), skipping `taken`.
 */
export async function findFreePort(from: number, host = '127.0.0.1', taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let port = from; port < 32768; port++) {
    if (taken.has(port)) continue;
    if (await portIsFree(port, host)) return port;
  }
  throw new StackError(`no free port between ${from} and 32767 on ${host}`);
}

async function resolvePorts(
  o: StackOptions,
  host: string,
): Promise<{ services: Record<ServiceName, Required<ServicePorts>>; gateway: number; gatewayMetrics: number }> {
  const spec = o.servicePorts ?? 'default';
  const taken = new Set<number>();
  const services = {} as Record<ServiceName, Required<ServicePorts>>;
  // Free ports start at a random place in 20000-29999 so that two stacks started together rarely race.
  let next = 20000 + Math.floor(Math.random() * 10000);
  const free = async () => {
    const port = await findFreePort(next, host, taken);
    taken.add(port);
    next = port + 1;
    return port;
  };
  for (const name of SERVICE_NAMES) {
    if (spec === 'free') {
      services[name] = { http: await free(), grpc: await free(), metrics: await free() };
    } else {
      const chosen = (spec !== 'default' && spec[name]) || DEFAULT_SERVICE_PORTS[name];
      taken.add(chosen.http).add(chosen.grpc);
      services[name] = { ...chosen, metrics: chosen.metrics ?? (await free()) };
      taken.add(services[name].metrics);
    }
  }
  const requestedGateway = o.gatewayPort ?? DEFAULT_GATEWAY_PORT;
  const gateway = requestedGateway === 0 ? await free() : requestedGateway;
  // A stack on free ports (tests, benches) keeps its metrics ports free too, so two stacks never share one.
  const gatewayMetrics = spec === 'default' && requestedGateway !== 0 ? DEFAULT_GATEWAY_METRICS_PORT : await free();

  const busy: string[] = [];
  const check = async (port: number, what: string) => {
    if (!(await portIsFree(port, host))) busy.push(`${host}:${port} (${what})`);
  };
  await Promise.all([
    check(gateway, 'gateway'),
    check(gatewayMetrics, 'gateway metrics'),
    ...SERVICE_NAMES.flatMap((n) => [
      check(services[n].http, `${n} HTTP`),
      check(services[n].grpc, `${n} gRPC`),
      check(services[n].metrics, `${n} metrics`),
    ]),
  ]);
  if (busy.length) {
    throw new StackError(
      `port${busy.length > 1 ? 's' : ''} already in use: ${busy.join(', ')}. ` +
        'Another stack may be running; stop it, or choose other ports (PORT for the gateway).',
    );
  }
  return { services, gateway, gatewayMetrics };
}

function abortError(): StackError {
  return new StackError('start aborted');
}

/** Polls GET <url>/readyz until 200; fails when the process exits, the deadline passes or the start is aborted. */
async function waitReady(proc: ManagedProcess, url: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    if (signal?.aborted) throw abortError();
    if (!proc.running) {
      throw new StackError(
        `${proc.name} ${proc.describeExit()} before it was ready. Last lines of ${proc.log.file}:\n${indent(proc.log.tail())}`,
      );
    }
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
      const body = await res.text();
      if (res.status === 200) return;
      last = `status ${res.status}: ${body.slice(0, 300)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) {
      throw new StackError(
        `${proc.name} was not ready within ${Math.round(timeoutMs / 1000)} s (${url}/readyz: ${last}). ` +
          `Last lines of ${proc.log.file}:\n${indent(proc.log.tail())}`,
      );
    }
    await delay(200);
  }
}

const indent = (s: string) =>
  s
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

/**
 * Starts crm, chat and files, then tasks and webhooks (they call crm over gRPC), then the gateway,
 * waiting for each one's /readyz. On any failure everything started is stopped and the promise rejects.
 */
export async function launchStack(o: StackOptions): Promise<Stack> {
  const root = o.root ?? REPO_ROOT;
  const host = o.host ?? '127.0.0.1';
  const logDir = o.logDir ?? path.join(root, '.data', 'logs');
  const readyTimeoutMs = o.readyTimeoutMs ?? 90_000;
  const stopGraceMs = o.stopGraceMs ?? 15_000;
  const sink = o.consoleSink ?? defaultConsoleSink;
  if (o.adminToken.length < 16) throw new StackError('the admin token must be at least 16 characters');
  if (o.identityTokenSecret.length < 32) throw new StackError('the identity token secret must be at least 32 characters');

  const ports = await resolvePorts(o, host);
  const serviceUrls = {} as Record<ServiceName, string>;
  const grpcAddresses = {} as Record<ServiceName, string>;
  for (const name of SERVICE_NAMES) {
    serviceUrls[name] = `http://${host}:${ports.services[name].http}`;
    grpcAddresses[name] = `${host}:${ports.services[name].grpc}`;
  }
  const gatewayUrl = `http://${host}:${ports.gateway}`;
  const metricsUrls = { gateway: `http://${host}:${ports.gatewayMetrics}` } as Record<ProcessName, string>;
  for (const name of SERVICE_NAMES) metricsUrls[name] = `http://${host}:${ports.services[name].metrics}`;

  const optional = (entries: Record<string, string | number | undefined>) =>
    Object.fromEntries(
      Object.entries(entries)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, String(v)]),
    );
  const common = {
    IDENTITY_TOKEN_SECRET: o.identityTokenSecret,
    HOST: host,
    ...optional({ LOG_LEVEL: o.logLevel }),
  };
  const envOf = {} as Record<ProcessName, Record<string, string>>;
  for (const name of SERVICE_NAMES) {
    envOf[name] = {
      ...common,
      DATABASE_URL: o.databaseUrl,
      NATS_URL: o.natsUrl,
      NATS_STREAM: o.natsStream ?? 'EVENTS',
      EVENT_SUBJECT_PREFIX: o.eventSubjectPrefix ?? 'events',
      HTTP_PORT: String(ports.services[name].http),
      GRPC_PORT: String(ports.services[name].grpc),
      METRICS_PORT: String(ports.services[name].metrics),
      ...optional({ DB_POOL_MAX: o.dbPoolMax }),
      ...(name === 'tasks' || name === 'webhooks' || name === 'chat' || name === 'files' ? { CRM_GRPC_URL: grpcAddresses.crm } : {}),
      // crm asks chat for the chat fields of the lead detail, tasks for its task count.
      ...(name === 'crm' ? { CHAT_GRPC_URL: grpcAddresses.chat, TASKS_GRPC_URL: grpcAddresses.tasks } : {}),
      // Signed file URLs point at this gateway's public download route; the local storage lives beside the logs.
      ...(name === 'files' || name === 'webhooks' ? { FILES_PUBLIC_BASE_URL: `${gatewayUrl}/public/files` } : {}),
      ...(name === 'files' ? { FILES_LOCAL_DIR: path.join(root, '.data', 'files') } : {}),
      ...(name === 'webhooks' ? optional({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: o.webhookAllowPrivateNetworks }) : {}),
      ...o.env,
      ...o.processEnv?.[name],
    };
  }
  envOf.gateway = {
    ...common,
    PORT: String(ports.gateway),
    METRICS_PORT: String(ports.gatewayMetrics),
    REDIS_URL: o.redisUrl,
    ADMIN_TOKEN: o.adminToken,
    CRM_URL: serviceUrls.crm,
    TASKS_URL: serviceUrls.tasks,
    CHAT_URL: serviceUrls.chat,
    FILES_URL: serviceUrls.files,
    WEBHOOKS_URL: serviceUrls.webhooks,
    CRM_GRPC_URL: grpcAddresses.crm,
    ...optional({ REDIS_KEY_PREFIX: o.redisKeyPrefix, RATE_LIMIT_PER_MINUTE: o.rateLimitPerMinute }),
    ...o.env,
    ...o.processEnv?.gateway,
  };

  const supervisors = new Map<ProcessName, Supervisor>();
  const pids = {} as Record<ProcessName, number>;
  let up = false;
  const spawnOne = (name: ProcessName) => {
    const main = name === 'gateway' ? path.join(root, 'gateway', 'src', 'main.ts') : path.join(root, 'services', name, 'src', 'main.ts');
    const supervisor = new Supervisor(
      (sup) => {
        const proc = new ManagedProcess({
          name,
          command: process.execPath,
          args: ['--import', 'tsx', main],
          cwd: root,
          env: { ...process.env, ...envOf[name] },
          logDir,
          classify: pinoClassifier,
          sink,
          // Before the stack is up, waitReady reports the exit with the log's last lines.
          onUnexpectedExit: (p, info) => up && sup.exited(p, info),
        });
        pids[name] = proc.pid;
        return proc;
      },
      o.restartPolicy ?? DEFAULT_RESTART_POLICY,
      {
        onRestart: (p, info, attempt, delayMs) => {
          if (o.onRestart) o.onRestart(name, info, attempt, delayMs, p.log.file);
          else sink(consoleLine(name, 'warn', `${p.describeExit()} unexpectedly; restarting in ${delayMs} ms; see ${p.log.file}`));
        },
        onGiveUp: (p, info) => {
          if (o.onUnexpectedExit) o.onUnexpectedExit(name, info, p.log.file);
          else sink(consoleLine(name, 'error', `${p.describeExit()} unexpectedly and keeps crashing; see ${p.log.file}`));
        },
      },
    );
    supervisors.set(name, supervisor);
    return supervisor.current;
  };
  const urlOf = (name: ProcessName) => (name === 'gateway' ? gatewayUrl : serviceUrls[name]);
  const startGroup = async (names: ProcessName[]) => {
    if (o.signal?.aborted) throw abortError();
    const started = names.map(spawnOne);
    await Promise.all(started.map((p, i) => waitReady(p, urlOf(names[i]!), readyTimeoutMs, o.signal)));
  };

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      const gateway = supervisors.get('gateway');
      if (gateway) await gateway.stop(stopGraceMs);
      await Promise.all([...supervisors.values()].filter((p) => p !== gateway).map((p) => p.stop(stopGraceMs)));
    })();
    return stopping;
  };

  try {
    await startGroup(['crm', 'chat', 'files']);
    await startGroup(['tasks', 'webhooks']);
    await startGroup(['gateway']);
  } catch (err) {
    await stop();
    throw err;
  }
  up = true;
  return { gatewayUrl, adminToken: o.adminToken, serviceUrls, metricsUrls, grpcAddresses, pids, logDir, env: envOf, stop };
}
