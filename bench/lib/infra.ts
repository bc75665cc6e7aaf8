/** What the bench creates outside its processes, and removes afterwards: a database, a stream, Redis keys. */

import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { StackOptions } from '../../scripts/stack.js';

export const PG_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const NATS_URL = process.env.BENCH_NATS_URL ?? '127.0.0.1:4222';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function databaseUrl(name: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, database?: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: database ? databaseUrl(database) : PG_ADMIN_URL });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

export const createDatabase = (name: string) => adminQuery(`create database "${name}"`);
export const dropDatabase = (name: string) => adminQuery(`drop database if exists "${name}" with (force)`);

export async function deleteStream(stream: string): Promise<boolean> {
  const nc = await connect({ servers: NATS_URL.split(',') });
  try {
    const jsm = await jetstreamManager(nc);
    return await jsm.streams.delete(stream).catch(() => false);
  } finally {
    await nc.close();
  }
}

export async function deleteRedisKeys(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/** A run's resources outside its processes. */
export interface RunResources {
  database: string;
  /** False until the database exists (a run that failed before must not drop someone else's of that name). */
  databaseCreated: boolean;
  natsStream: string;
  redisPrefix: string;
}

/** Drops the run's database, deletes its stream and its Redis keys; one note per step (done or failed). */
export async function releaseResources(r: RunResources): Promise<string[]> {
  const notes: string[] = [];
  if (r.databaseCreated) {
    await dropDatabase(r.database).then(
      () => notes.push(`dropped database ${r.database}`),
      (e: Error) => notes.push(`drop database: ${e.message}`),
    );
  }
  await deleteStream(r.natsStream).then(
    (ok) => notes.push(ok ? `deleted NATS stream ${r.natsStream}` : `NATS stream ${r.natsStream} not found`),
    (e: Error) => notes.push(`NATS stream: ${e.message}`),
  );
  await deleteRedisKeys(r.redisPrefix).then(
    (n) => notes.push(`deleted ${n} Redis keys ${r.redisPrefix}*`),
    (e: Error) => notes.push(`Redis keys: ${e.message}`),
  );
  return notes;
}

/** The clean-ups of the benches under way: a signal runs them all (bench:all runs several benches in turn). */
const pending = new Set<() => Promise<void>>();

/** Runs `main`, then `cleanup` whatever happened; an interruption meanwhile runs `cleanup` through runBench. */
export async function withCleanup<T>(main: () => Promise<T>, cleanup: () => Promise<void>): Promise<T> {
  pending.add(cleanup);
  try {
    return await main();
  } finally {
    pending.delete(cleanup);
    await cleanup();
  }
}

/**
 * Runs a bench's `main` (its clean-ups registered with withCleanup), then `cleanup` (also on SIGINT / SIGTERM,
 * once, with every pending clean-up), and exits: 1 when `main` failed, 130 when interrupted.
 */
export async function runBench(main: () => Promise<unknown>, cleanup: () => Promise<void> = async () => undefined): Promise<never> {
  let interrupted = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      if (interrupted) return;
      interrupted = true;
      process.stderr.write(`${sig}: stopping what the bench started ...\n`);
      const all = [...pending, cleanup];
      pending.clear();
      void Promise.allSettled(all.map((c) => c())).finally(() => process.exit(130));
    });
  }
  let code = 0;
  try {
    await main();
  } catch (err) {
    code = 1;
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  }
  if (interrupted) return new Promise<never>(() => undefined);
  await cleanup();
  process.exit(code);
}

/** What every bench's stack shares: its own database, stream, subjects and Redis keys, free ports, logs under `outDir`. */
export function benchStackOptions(r: {
  database: string;
  natsStream: string;
  subjectPrefix: string;
  redisPrefix: string;
  outDir: string;
  adminToken: string;
  identitySecret: string;
}): Pick<
  StackOptions,
  | 'databaseUrl'
  | 'natsUrl'
  | 'redisUrl'
  | 'adminToken'
  | 'identityTokenSecret'
  | 'servicePorts'
  | 'gatewayPort'
  | 'natsStream'
  | 'eventSubjectPrefix'
  | 'redisKeyPrefix'
  | 'logLevel'
  | 'logDir'
> {
  return {
    databaseUrl: databaseUrl(r.database),
    natsUrl: NATS_URL,
    redisUrl: REDIS_URL,
    adminToken: r.adminToken,
    identityTokenSecret: r.identitySecret,
    servicePorts: 'free',
    gatewayPort: 0,
    natsStream: r.natsStream,
    eventSubjectPrefix: r.subjectPrefix,
    redisKeyPrefix: r.redisPrefix,
    logLevel: 'warn',
    logDir: path.join(r.outDir, 'logs'),
  };
}
