import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNats } from '@svc/platform/events/nats';
import { createLogger } from '@svc/platform/logging';
import { createTestDatabase, randomSuffix, TEST_NATS_URL, TEST_REDIS_URL, type TestDatabase } from '@svc/platform/testing';
import { type Child, spawnEntry, waitReady } from '../../support/processes.js';
import { freePort } from '../../support/stack.js';

export const DEPLOYABLES = ['crm', 'tasks', 'chat', 'files', 'webhooks', 'gateway'] as const;
export type Deployable = (typeof DEPLOYABLES)[number];

export interface Deployed {
  url: string;
  child: Child;
  /** Starts it again on the same ports (after a kill) and waits until it is ready. */
  start(): Promise<void>;
  /** SIGKILL: no shutdown hook runs. */
  kill9(): Promise<void>;
}

/**
 * Every deployable as its own process (so any of them can be killed with SIGKILL and started again on the same
 * ports), against Postgres, NATS and Redis that the caller may own and restart. The output of every process
 * that ever ran is kept: the secrets scan reads it.
 */
export interface System {
  gatewayUrl: string;
  adminToken: string;
  env: Record<string, string>;
  db: TestDatabase;
  natsUrl: string;
  deployed: Record<Deployable, Deployed>;
  /** Every line any process of the system wrote, restarts included. */
  logs(): string;
  stop(): Promise<void>;
}

export interface SystemOptions {
  natsUrl?: string;
  postgresUrl?: string;
  redisUrl?: string;
  /** The log level of every process (debug by default: the secrets scan wants everything they can say). */
  logLevel?: string;
  webhooks?: Record<string, string>;
}

export async function startSystem(o: SystemOptions = {}): Promise<System> {
  const run = randomSuffix();
  const natsUrl = o.natsUrl ?? TEST_NATS_URL;
  const db = await createTestDatabase('svc_rel', o.postgresUrl);
  const ports = Object.fromEntries(
    await Promise.all(DEPLOYABLES.map(async (name) => [name, { http: await freePort(), grpc: await freePort() }] as const)),
  ) as Record<Deployable, { http: number; grpc: number }>;
  const url = (name: Deployable) => `http://127.0.0.1:${ports[name].http}`;
  // The world uploads files: each run stores them in a directory of its own, removed on stop.
  const filesDir = await mkdtemp(join(tmpdir(), `rel-files-${run}-`));
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    NATS_URL: natsUrl,
    NATS_STREAM: `R_${run}`,
    EVENT_SUBJECT_PREFIX: `r${run}`,
    IDENTITY_TOKEN_SECRET: randomBytes(32).toString('hex'),
    DB_POOL_MAX: '5',
    LOG_LEVEL: o.logLevel ?? process.env.RELIABILITY_LOG_LEVEL ?? 'debug',
    CRM_GRPC_URL: `127.0.0.1:${ports.crm.grpc}`,
  };
  const adminToken = randomBytes(24).toString('hex');
  const envOf = (name: Deployable): Record<string, string> => {
    if (name === 'gateway') {
      return {
        PORT: String(ports.gateway.http),
        METRICS_PORT: '0',
        REDIS_URL: o.redisUrl ?? TEST_REDIS_URL,
        REDIS_KEY_PREFIX: `r${run}:`,
        ADMIN_TOKEN: adminToken,
        IDENTITY_TOKEN_SECRET: env.IDENTITY_TOKEN_SECRET!,
        CRM_URL: url('crm'),
        TASKS_URL: url('tasks'),
        CHAT_URL: url('chat'),
        FILES_URL: url('files'),
        WEBHOOKS_URL: url('webhooks'),
        CRM_GRPC_URL: env.CRM_GRPC_URL!,
        LOG_LEVEL: env.LOG_LEVEL!,
      };
    }
    const own = { ...env, HTTP_PORT: String(ports[name].http), GRPC_PORT: String(ports[name].grpc), METRICS_PORT: '0' };
    if (name === 'files') return { ...own, FILES_LOCAL_DIR: filesDir, FILES_PUBLIC_BASE_URL: `${url('gateway')}/public/files` };
    return name === 'webhooks' ? { ...own, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...o.webhooks } : own;
  };
  const finished: string[] = [];
  /** Every output of a process, restarts included, in order (what RELIABILITY_LOG_DIR writes out). */
  const outputs = Object.fromEntries(DEPLOYABLES.map((n) => [n, [] as string[]])) as Record<Deployable, string[]>;
  const entry = (name: Deployable) => (name === 'gateway' ? 'gateway/src/main.ts' : `services/${name}/src/main.ts`);
  const deploy = (name: Deployable): Deployed => {
    const d: Deployed = {
      url: url(name),
      child: spawnEntry(entry(name), envOf(name)),
      start: async () => {
        d.child = spawnEntry(entry(name), envOf(name));
        await waitReady(d.url, 60_000);
      },
      kill9: async () => {
        const code = await d.child.stop('SIGKILL');
        finished.push(d.child.output());
        outputs[name].push(d.child.output());
        void code;
      },
    };
    return d;
  };
  const deployed = {} as Record<Deployable, Deployed>;
  try {
    // crm first: it owns the keys the others' identities come from, and its migrations are the longest.
    deployed.crm = deploy('crm');
    await waitReady(deployed.crm.url, 60_000);
    for (const name of ['tasks', 'chat', 'files', 'webhooks'] as const) deployed[name] = deploy(name);
    await Promise.all((['tasks', 'chat', 'files', 'webhooks'] as const).map((n) => waitReady(deployed[n].url, 60_000)));
    deployed.gateway = deploy('gateway');
    await waitReady(deployed.gateway.url, 60_000);
  } catch (err) {
    const outputs = Object.entries(deployed).map(([n, d]) => `--- ${n}\n${d.child.output().slice(-2000)}`);
    await Promise.all(Object.values(deployed).map((d) => d.child.stop('SIGKILL')));
    await db.drop();
    await rm(filesDir, { recursive: true, force: true });
    throw new Error(`the system did not start: ${(err as Error).message}\n${outputs.join('\n')}`);
  }
  return {
    gatewayUrl: deployed.gateway.url,
    adminToken,
    env,
    db,
    natsUrl,
    deployed,
    logs: () => [...finished, ...DEPLOYABLES.map((n) => deployed[n].child.output())].join('\n'),
    stop: async () => {
      await deployed.gateway.child.stop();
      await Promise.all((['tasks', 'chat', 'files', 'webhooks'] as const).map((n) => deployed[n].child.stop()));
      await deployed.crm.child.stop();
      const dir = process.env.RELIABILITY_LOG_DIR;
      if (dir) {
        // Each process's lines in a file of its own, for reading after the run.
        await mkdir(dir, { recursive: true });
        for (const n of DEPLOYABLES) await writeFile(join(dir, `${n}.log`), [...outputs[n], deployed[n].child.output()].join(''));
      }
      const nats = await connectNats(natsUrl, 'rel-cleanup', createLogger('test', 'silent')).catch(() => undefined);
      await nats?.jsm.streams.delete(env.NATS_STREAM!).catch(() => undefined);
      await nats?.nc.close();
      await db.drop();
      await rm(filesDir, { recursive: true, force: true });
    },
  };
}
