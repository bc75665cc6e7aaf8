/**
 * `tsx bench/experiments/one-connection.ts label=/path/to/tree ...`: GET lead latency at ONE connection, crm direct
 * and through the gateway, for several source trees (e.g. `git archive <commit>` extracted, with this repository's
 * node_modules hard-linked in) measured in the same time window. Each tree runs its own crm and gateway on its own
 * fresh database, seeded as `npm run bench` seeds; then PROBE_ROUNDS rounds in which the trees take turns (in a
 * rotating order), each with a PROBE_WINDOW_S-second loop of sequential GETs of its lead over one keep-alive connection
 * to crm, the same to the gateway, and half as long to crm's `/healthz` (the machine's own latency at that moment).
 * Prints each window's median and, per tree, the median of its windows' medians and of the gateway's added median.
 *
 * PROBE_CLIENT=autocannon measures with autocannon as `npm run bench` does (default: node:http, exact timings);
 * PROBE_BURST_S=n first reads each tree's lead at PROBE_BURST_C (32) connections for n seconds, as the bench's
 * 32-connection phases do before its one-connection ones; PROBE_HOLD=1 keeps a snapshot open in each database
 * during the rounds (row versions newer than it cannot be pruned).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { resolve } from 'node:path';
import { IDENTITY_HEADER, IdentitySigner } from '@svc/platform/identity';
import pg from 'pg';
import { adminQuery, createDatabase, databaseUrl, deleteRedisKeys, deleteStream, dropDatabase, NATS_URL, REDIS_URL } from '../lib/infra.js';
import { measure } from '../lib/load.js';
import { type Seeded, seed } from '../lib/seed.js';

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 6);
const WINDOW_MS = Number(process.env.PROBE_WINDOW_S ?? 2) * 1000;
const BURST_MS = Number(process.env.PROBE_BURST_S ?? 0) * 1000;
const BURST_C = Number(process.env.PROBE_BURST_C ?? 32);

interface Window {
  direct: number;
  gateway: number;
  healthz: number;
}

interface Tree {
  label: string;
  dir: string;
  tag: string;
  procs: ChildProcess[];
  crmUrl: string;
  gatewayUrl: string;
  /** Headers of a direct call (a fresh identity token: they expire) and of a gateway call (the API key). */
  direct: () => Promise<Record<string, string>>;
  viaGateway: Record<string, string>;
  seeded?: Seeded;
  windows: Window[];
}

const freePort = async () => {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = (url: string, headers: Record<string, string>, through = agent) =>
  new Promise<{ status: number; text: string }>((res, rej) => {
    http
      .get(url, { agent: through, headers }, (r) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (c) => (text += c));
        r.on('end', () => res({ status: r.statusCode ?? 0, text }));
      })
      .on('error', rej);
  });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** Sequential GETs for `ms` at one connection: the median latency in µs. */
async function loop(url: string, headers: Record<string, string>, ms: number): Promise<number> {
  if (process.env.PROBE_CLIENT === 'autocannon') {
    const r = await measure({ url, headers, connections: 1, durationS: ms / 1000, warmupS: 0, expectStatus: 200 });
    if (r.unexpected) throw new Error(`${url}: ${JSON.stringify(r.statuses)}`);
    return r.p50us;
  }
  const lat: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const t0 = performance.now();
    const r = await get(url, headers);
    lat.push((performance.now() - t0) * 1000);
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  return median(lat);
}

/** BURST_C connections of sequential GETs for `ms`: how many were answered. */
async function burst(url: string, headers: Record<string, string>, ms: number): Promise<number> {
  const many = new http.Agent({ keepAlive: true, maxSockets: BURST_C });
  const end = performance.now() + ms;
  let n = 0;
  await Promise.all(
    Array.from({ length: BURST_C }, async () => {
      while (performance.now() < end) {
        const r = await get(url, headers, many);
        if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
        n++;
      }
    }),
  );
  many.destroy();
  return n;
}

async function waitReady(url: string, label: string, path = '/readyz'): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await get(`${url}${path}`, {}).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${label} not ready at ${url}`);
}

async function start(tree: Tree): Promise<void> {
  await createDatabase(tree.tag);
  const secret = randomBytes(32).toString('hex');
  const adminToken = randomBytes(24).toString('hex');
  const [http_, grpc, gw] = [await freePort(), await freePort(), await freePort()];
  const run = (entry: string, env: Record<string, string>) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', resolve(tree.dir, entry)], {
      cwd: tree.dir,
      env: { PATH: process.env.PATH ?? '', IDENTITY_TOKEN_SECRET: secret, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    tree.procs.push(proc);
  };
  tree.crmUrl = `http://127.0.0.1:${http_}`;
  tree.gatewayUrl = `http://127.0.0.1:${gw}`;
  run('services/crm/src/main.ts', {
    DATABASE_URL: databaseUrl(tree.tag),
    NATS_URL,
    NATS_STREAM: tree.tag.toUpperCase(),
    EVENT_SUBJECT_PREFIX: tree.tag,
    HTTP_PORT: String(http_),
    GRPC_PORT: String(grpc),
    METRICS_PORT: '0',
  });
  await waitReady(tree.crmUrl, `${tree.label} crm`);
  run('gateway/src/main.ts', {
    PORT: String(gw),
    METRICS_PORT: '0',
    REDIS_URL,
    REDIS_KEY_PREFIX: `${tree.tag}:`,
    ADMIN_TOKEN: adminToken,
    CRM_URL: tree.crmUrl,
    // Only crm is called.
    ...Object.fromEntries(['TASKS_URL', 'CHAT_URL', 'FILES_URL', 'WEBHOOKS_URL'].map((k) => [k, 'http://127.0.0.1:9'])),
    CRM_GRPC_URL: `127.0.0.1:${grpc}`,
  });
  // Its /readyz asks every upstream; only crm runs here.
  await waitReady(tree.gatewayUrl, `${tree.label} gateway`, '/healthz');
  const s = await seed(tree.gatewayUrl, adminToken);
  tree.seeded = s;
  const signer = new IdentitySigner(secret);
  tree.direct = async () => ({
    [IDENTITY_HEADER]: await signer.sign({
      kind: 'integration',
      companyId: s.companyId,
      userId: s.userId,
      keyId: s.keyId,
      permissions: ['*'],
    }),
  });
  tree.viaGateway = { authorization: `Bearer ${s.key}` };
}

const trees: Tree[] = process.argv.slice(2).map((arg, i) => {
  const [label, dir] = arg.split('=') as [string, string];
  return {
    label,
    dir: resolve(dir),
    tag: `probe_${Date.now()}_${i}`,
    procs: [],
    crmUrl: '',
    gatewayUrl: '',
    direct: async () => ({}),
    viaGateway: {},
    windows: [],
  };
});
const holders: pg.Client[] = [];
try {
  for (const tree of trees) await start(tree);
  const lead = (tree: Tree, base: string) => `${base}/integrations/external/leads/${tree.seeded!.leadId}`;
  for (const tree of BURST_MS ? trees : []) {
    const n = await burst(lead(tree, tree.crmUrl), await tree.direct(), BURST_MS);
    process.stdout.write(`${tree.label.padEnd(10)} burst: ${n} GETs at ${BURST_C} connections in ${BURST_MS / 1000} s\n`);
  }
  for (const tree of process.env.PROBE_HOLD ? trees : []) {
    const holder = new pg.Client({ connectionString: databaseUrl(tree.tag) });
    await holder.connect();
    await holder.query('begin isolation level repeatable read');
    await holder.query('select count(*) from crm.leads');
    holders.push(holder);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < trees.length; k++) {
      const tree = trees[(round + k) % trees.length]!;
      const w: Window = {
        direct: await loop(lead(tree, tree.crmUrl), await tree.direct(), WINDOW_MS),
        gateway: await loop(lead(tree, tree.gatewayUrl), tree.viaGateway, WINDOW_MS),
        healthz: await loop(`${tree.crmUrl}/healthz`, {}, WINDOW_MS / 2),
      };
      tree.windows.push(w);
      process.stdout.write(
        `round ${round + 1} ${tree.label.padEnd(10)} p50 µs: direct ${w.direct.toFixed(0)}, gateway ${w.gateway.toFixed(0)} ` +
          `(adds ${(w.gateway - w.direct).toFixed(0)}), crm /healthz ${w.healthz.toFixed(0)}\n`,
      );
    }
  }
  process.stdout.write(`\nmedian of ${ROUNDS} windows' medians (min–max), µs:\n`);
  for (const tree of trees) {
    const of = (f: (w: Window) => number) => {
      const xs = tree.windows.map(f);
      return `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
    };
    process.stdout.write(
      `${tree.label.padEnd(10)} direct ${of((w) => w.direct)}, gateway ${of((w) => w.gateway)}, ` +
        `added ${of((w) => w.gateway - w.direct)}, crm /healthz ${of((w) => w.healthz)}\n`,
    );
  }
} finally {
  for (const holder of holders) await holder.end();
  agent.destroy();
  for (const tree of trees) {
    for (const proc of tree.procs) {
      const exited = new Promise((r) => (proc.exitCode === null ? proc.once('exit', r) : r(null)));
      proc.kill('SIGTERM');
      await exited;
    }
    await dropDatabase(tree.tag).catch(() => undefined);
    await deleteStream(tree.tag.toUpperCase()).catch(() => undefined);
    await deleteRedisKeys(`${tree.tag}:`).catch(() => undefined);
  }
  await adminQuery('select 1');
}
