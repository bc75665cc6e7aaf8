/**
 * `npm run bench`: throughput and latency of the gateway and the lead path, each figure printed next
 * to a ceiling measured in the same run on the same machine. Prints, never asserts. See bench/README.md.
 *
 * Knobs (environment): BENCH_CONNECTIONS (32), BENCH_DURATION (10 s), BENCH_WARMUP (2 s),
 * BENCH_ONE_DURATION (5 s) and BENCH_ONE_WARMUP (1 s) for the one-connection runs,
 * BENCH_STAGE_DURATION (4 s) for the saturating runs of the gateway stage breakdown, BENCH_STAGES=0 to
 * skip that breakdown, BENCH_PROFILE=1 to write CPU profiles of the gateways and crm (node --cpu-prof)
 * and print a summary per phase, BENCH_PGBENCH_THREADS (1).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dbDefinition, LeadSql } from '@svc/crm';
import { createOrm } from '@svc/platform/db/orm';
import { IDENTITY_HEADER, IdentitySigner } from '@svc/platform/identity';
import { launchStack, type ProcessName, REPO_ROOT, type Stack } from '../scripts/stack.js';
import { type CpuSnapshot, coresBusy, formatCores, snapshot } from './lib/cpu.js';
import { formatSummary, monotonicUs, summarize } from './lib/cpuprofile.js';
import { type ExtraGateway, startGatewayInFrontOf } from './lib/gateway-raw.js';
import { adminQuery, createDatabase, databaseUrl, deleteRedisKeys, deleteStream, dropDatabase, NATS_URL, REDIS_URL } from './lib/infra.js';
import { type LoadResult, type LoadSpec, measure } from './lib/load.js';
import { type Activity, ActivitySampler, formatActivity } from './lib/pgactivity.js';
import { leadCreationScript, leadReadScript, type PgbenchResult, pgbench } from './lib/pgbench.js';
import { type RawServer, startRawServer } from './lib/raw.js';
import { BENCH_RATE_LIMIT, createLead, type Seeded, seed } from './lib/seed.js';
import type { Figures } from './lib/stats.js';

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};
const C = num('BENCH_CONNECTIONS', 32);
const DURATION = num('BENCH_DURATION', 10);
const WARMUP = num('BENCH_WARMUP', 2);
const ONE_DURATION = num('BENCH_ONE_DURATION', 5);
const ONE_WARMUP = num('BENCH_ONE_WARMUP', 1);
const STAGE_DURATION = num('BENCH_STAGE_DURATION', 4);
const STAGES = process.env.BENCH_STAGES !== '0';
const PROFILE = process.env.BENCH_PROFILE === '1';
const PGBENCH_THREADS = num('BENCH_PGBENCH_THREADS', 1);

const TARGET_GATEWAY_OF_RAW = 0.1;
const TARGET_ADDED_MEDIAN_US = 300;
const TARGET_CREATE_OF_PGBENCH = 0.25;

const runId = `${Date.now()}`;
const database = `svc_bench_${runId}`;
const natsStream = `BENCH_${runId}`;
const subjectPrefix = `bench${runId}`;
const redisPrefix = `bench${runId}:`;
const outDir = path.join(REPO_ROOT, '.data', 'bench', runId);
const profDir = path.join(outDir, 'prof');
const identitySecret = randomBytes(32).toString('hex');
const adminToken = randomBytes(24).toString('hex');

const say = (s = '') => process.stdout.write(`${s}\n`);
const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toString() : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f3 = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : 'n/a');
const ratio = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);
const verdict = (ok: boolean) => (ok ? 'PASS' : 'BELOW');
const profEnv = (name: string) => ({ NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.join(profDir, name)}` });

interface Phase {
  name: string;
  fromUs: number;
  toUs: number;
  cores: Record<string, number>;
}
const phases: Phase[] = [];

let stack: Stack | undefined;
let raw: RawServer | undefined;
let gatewayRaw: ExtraGateway | undefined;
const startedPids = new Map<string, number>();
let databaseCreated = false;
let crashed: string | undefined;

function cpuTargets() {
  const pids: Record<string, number | undefined> = {};
  if (stack) for (const [name, pid] of Object.entries(stack.pids)) pids[name] = pid;
  if (raw) pids['raw node:http'] = raw.pid;
  if (gatewayRaw) pids['gateway-raw'] = gatewayRaw.pid;
  return { pids, comms: ['postgres', 'redis-server', 'nats-server', 'pgbench'] };
}

/** Runs `work` as a named phase: its monotonic window (for profiles) and the CPU of every process in it. */
async function phase<T>(name: string, work: () => Promise<T>): Promise<{ value: T; cores: Record<string, number> }> {
  if (crashed) throw new Error(crashed);
  const before: CpuSnapshot = snapshot(cpuTargets());
  const fromUs = monotonicUs();
  const value = await work();
  const toUs = monotonicUs();
  const cores = coresBusy(before, snapshot(cpuTargets()));
  phases.push({ name, fromUs, toUs, cores });
  if (crashed) throw new Error(crashed);
  return { value, cores };
}

/** The same, with pg_stat_activity sampled during the measured part. */
async function sampledPhase<T>(
  name: string,
  work: () => Promise<T>,
): Promise<{ value: T; cores: Record<string, number>; activity: Activity }> {
  const sampler = new ActivitySampler(databaseUrl(database));
  await sampler.start();
  try {
    const r = await phase(name, work);
    return { ...r, activity: await sampler.stop() };
  } catch (err) {
    await sampler.stop().catch(() => undefined);
    throw err;
  }
}

const header = () => say(`  ${''.padEnd(50)} ${'req/s'.padStart(9)} ${'p50 µs'.padStart(9)} ${'p99 µs'.padStart(9)}`);

function line(
  label: string,
  r: Figures & { unexpected?: number; statuses?: Record<string, number> },
  cores: Record<string, number>,
  cpuOf?: string,
): void {
  const bad = r.unexpected ? `   UNEXPECTED: ${r.unexpected} (statuses ${JSON.stringify(r.statuses ?? {})})` : '';
  say(`  ${label.padEnd(50)} ${f1(r.rate).padStart(9)} ${f0(r.p50us).padStart(9)} ${f0(r.p99us).padStart(9)}${bad}`);
  // CPU per request of the process that serves it: cores busy / requests per second.
  const per =
    cpuOf && cores[cpuOf] !== undefined && r.rate > 0 ? `; ${cpuOf} ${f0((cores[cpuOf]! / r.rate) * 1e6)} µs CPU per request` : '';
  const other = cores['other processes'] ?? 0;
  const disturbed = other > 0.15 ? `   DISTURBED: other processes used ${other.toFixed(2)} cores` : '';
  if (disturbed) disturbedPhases.push(label);
  say(`  ${''.padEnd(52)}cpu cores: ${formatCores(cores)}${per}${disturbed}`);
}
const disturbedPhases: string[] = [];

function trend(r: LoadResult): string {
  const s = r.perSecond;
  if (s.length < 4) return s.join(' ');
  const head = (s[0]! + s[1]!) / 2;
  const tail = (s[s.length - 1]! + s[s.length - 2]!) / 2;
  return `${s.join(' ')} (last 2 s / first 2 s = ${ratio(tail, head).toFixed(2)})`;
}

/** The commit measured, and whether the work tree differs from it (services/, gateway/, scripts/). */
function gitDescribe(): string {
  try {
    const head = execFileSync('git', ['-C', REPO_ROOT, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', REPO_ROOT, 'status', '--porcelain', '--', 'services', 'gateway', 'scripts', 'proto'], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
    return `${head}${dirty.length ? ` + uncommitted changes in ${dirty.length} file(s): ${dirty.map((l) => l.slice(3)).join(', ')}` : ''}`;
  } catch {
    return 'unknown (no git)';
  }
}

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const cpus = os.cpus();
  const [pgVersion] = await adminQuery<{ server_version: string }>('show server_version');
  const command =
    process.env.npm_lifecycle_event === 'bench'
      ? `npm run bench   (${process.env.npm_lifecycle_script ?? 'tsx bench/run.ts'})`
      : process.argv.map((a) => path.relative(REPO_ROOT, a) || a).join(' ');
  const knobs = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_'))
    .map(([k, v]) => `${k}=${v}`);
  say('# svc bench');
  say(`machine: ${cpus.length} cpus (${cpus[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}`);
  say(`node ${process.version}; Postgres ${pgVersion?.server_version}; load generator: autocannon 9 in this process (1 thread)`);
  say(`command: ${command}${knobs.length ? `   with ${knobs.join(' ')}` : ''}`);
  say(`code: ${gitDescribe()}`);
  say(
    `run: database ${database}, NATS stream ${natsStream}, Redis prefix ${redisPrefix}; logs and artefacts in ${path.relative(REPO_ROOT, outDir)}`,
  );
  say(
    `settings: ${C} connections for ${DURATION} s after a ${WARMUP} s warm-up; one connection for ${ONE_DURATION} s after ${ONE_WARMUP} s` +
      `${PROFILE ? '; PROFILING gateway and crm (slower)' : ''}`,
  );
  const idle0 = snapshot({ pids: {}, comms: [] });
  await new Promise((r) => setTimeout(r, 2000));
  const busyBefore = coresBusy(idle0, snapshot({ pids: {}, comms: [] }))['other processes'] ?? 0;
  say(
    `machine load before the start: ${busyBefore.toFixed(2)} cores busy (2 s sample)${busyBefore > 0.15 ? '  NOT IDLE: figures will be disturbed' : ''}`,
  );
  say('cpu cores = CPU time of each process / wall time of the phase (warm-up included); "other processes" = the rest of the machine');
  say();

  await createDatabase(database);
  databaseCreated = true;
  const t0 = performance.now();
  stack = await launchStack({
    databaseUrl: databaseUrl(database),
    natsUrl: NATS_URL,
    redisUrl: REDIS_URL,
    adminToken,
    identityTokenSecret: identitySecret,
    servicePorts: 'free',
    gatewayPort: 0,
    natsStream,
    eventSubjectPrefix: subjectPrefix,
    redisKeyPrefix: redisPrefix,
    logLevel: 'warn',
    logDir: path.join(outDir, 'logs'),
    processEnv: PROFILE ? { gateway: profEnv('gateway'), crm: profEnv('crm') } : undefined,
    onUnexpectedExit: (name: ProcessName, info, logFile) => {
      crashed = `${name} exited unexpectedly (${JSON.stringify(info)}); see ${logFile}`;
      process.stderr.write(`${crashed}\n`);
    },
  });
  for (const [name, pid] of Object.entries(stack.pids)) startedPids.set(name, pid);
  say(`stack up in ${((performance.now() - t0) / 1000).toFixed(1)} s: gateway ${stack.gatewayUrl}, crm ${stack.serviceUrls.crm}`);
  const poolMax = stack.env.crm.DB_POOL_MAX ?? '10';
  say(`  crm DB pool: ${poolMax} connections${stack.env.crm.DB_POOL_MAX ? '' : ' (service default)'}`);

  const s: Seeded = await seed(stack.gatewayUrl, adminToken);
  say(`seeded company ${s.companyId}, key ${s.keyId} (permissions ["*"], rate_limit_per_minute ${BENCH_RATE_LIMIT}), lead ${s.leadId}`);

  const keyAuth = { authorization: `Bearer ${s.key}` };
  const token = await new IdentitySigner(identitySecret, 3600).sign({
    kind: 'integration',
    companyId: s.companyId,
    userId: s.userId,
    keyId: s.keyId,
    permissions: ['*'],
  });
  const direct = { [IDENTITY_HEADER]: token };

  // The lead detail body, as the ceiling's fixed answer.
  const first = await fetch(`${stack.gatewayUrl}/integrations/external/leads/${s.leadId}`, { headers: keyAuth });
  const body = await first.text();
  if (first.status !== 200) throw new Error(`GET lead through the gateway: ${first.status} ${body.slice(0, 300)}`);
  const check = await fetch(`${stack.serviceUrls.crm}/integrations/external/leads/${s.leadId}`, { headers: direct });
  if (check.status !== 200) throw new Error(`GET lead from crm directly: ${check.status} ${(await check.text()).slice(0, 300)}`);
  await check.arrayBuffer();
  raw = await startRawServer(body);
  startedPids.set('raw node:http', raw.pid);
  say(`raw node:http ceiling at ${raw.url} (pid ${raw.pid}) answers a fixed ${body.length}-byte JSON (the lead detail body)`);
  say();

  const pgUrl = new URL(databaseUrl(database));
  const pgbenchSpec = (name: string, script: string, clients: number, durationS: number, warmupS: number) => ({
    name,
    database,
    host: pgUrl.hostname,
    port: Number(pgUrl.port || 5432),
    user: decodeURIComponent(pgUrl.username || 'postgres'),
    clients,
    threads: Math.min(PGBENCH_THREADS, clients),
    durationS,
    warmupS,
    script,
    workDir: path.join(outDir, 'pgbench'),
  });
  const onPgbench = (pid: number) => startedPids.set(`pgbench ${pid}`, pid);
  const ids = { companyId: s.companyId, userId: s.userId };
  // crm's own statement texts for the pgbench ceilings (built from the entity definitions, as crm builds them).
  const crmOrm = await createOrm({
    url: databaseUrl(database),
    schema: 'crm',
    entities: dbDefinition.entities,
    migrations: [],
    poolMax: 1,
  });
  const leadSql = new LeadSql(crmOrm);
  await crmOrm.close(true);

  // Each GET phase reads its own fresh lead, so that each phase's views can be checked (1d).
  const freshLead = () => createLead(stack!.gatewayUrl, s.key, 'Bench read');
  const many = { connections: C, durationS: DURATION, warmupS: WARMUP };
  const one = { connections: 1, durationS: ONE_DURATION, warmupS: ONE_WARMUP };
  const getSpec = (url: string, headers: Record<string, string>, shape: typeof many): LoadSpec => ({
    url,
    headers,
    expectStatus: 200,
    ...shape,
  });
  const readLeads: { label: string; id: string }[] = [];
  const runGet = async (label: string, shape: typeof many, target: 'raw' | 'direct' | 'gateway') => {
    if (target === 'raw') return phase(label, () => measure(getSpec(raw!.url, {}, shape)));
    const id = await freshLead();
    readLeads.push({ label, id });
    const base = target === 'direct' ? stack!.serviceUrls.crm : stack!.gatewayUrl;
    return phase(label, () => measure(getSpec(`${base}/integrations/external/leads/${id}`, target === 'direct' ? direct : keyAuth, shape)));
  };
  const runGetPgbench = async (label: string, clients: number, durationS: number, warmupS: number) => {
    const id = await freshLead();
    readLeads.push({ label, id });
    return phase(label, () =>
      pgbench(
        pgbenchSpec(`lead-read-${clients}c`, leadReadScript(leadSql, { ...ids, leadId: id }), clients, durationS, warmupS),
        onPgbench,
      ),
    );
  };

  // The services start cold (JIT, the ORM's caches, empty DB pools): one warm-up of the whole path,
  // through the gateway and straight to crm, before anything is measured.
  const warmLead = await freshLead();
  await measure(
    getSpec(`${stack.gatewayUrl}/integrations/external/leads/${warmLead}`, keyAuth, { ...many, durationS: WARMUP, warmupS: 0 }),
  );
  await measure(
    getSpec(`${stack.serviceUrls.crm}/integrations/external/leads/${warmLead}`, direct, { ...many, durationS: WARMUP, warmupS: 0 }),
  );

  say(`## 1a. GET /integrations/external/leads/{id} at ${C} connections (${DURATION} s after ${WARMUP} s warm-up)`);
  header();
  const rawMany = await runGet(`GET raw ${C}c`, many, 'raw');
  line('raw node:http, fixed JSON (ceiling)', rawMany.value, rawMany.cores, 'raw node:http');
  const directMany = await runGet(`GET direct ${C}c`, many, 'direct');
  line('crm direct (x-svc-identity token)', directMany.value, directMany.cores, 'crm');
  const gwMany = await runGet(`GET gateway ${C}c`, many, 'gateway');
  line('gateway (key auth + rate limit + proxy)', gwMany.value, gwMany.cores, 'gateway');
  const pgGetMany = await runGetPgbench(`GET pgbench ${C}c`, C, DURATION, WARMUP);
  line("reference: pgbench, crm's GET statements only", pgGetMany.value, pgGetMany.cores, 'postgres');
  const gwOfRaw = ratio(gwMany.value.rate, rawMany.value.rate);
  say(
    `  ratios: gateway/raw ${f3(gwOfRaw)} (target >= ${TARGET_GATEWAY_OF_RAW}: ${verdict(gwOfRaw >= TARGET_GATEWAY_OF_RAW)}); ` +
      `direct/raw ${f3(ratio(directMany.value.rate, rawMany.value.rate))}; gateway/direct ${f3(ratio(gwMany.value.rate, directMany.value.rate))}; ` +
      `direct/pgbench ${f3(ratio(directMany.value.rate, pgGetMany.value.rate))}`,
  );
  say(`  per-second responses: direct ${trend(directMany.value)}`);
  say(`                        gateway ${trend(gwMany.value)}`);
  say();

  say(`## 1b. The same GET at ONE connection (${ONE_DURATION} s after ${ONE_WARMUP} s warm-up)`);
  header();
  const rawOne = await runGet('GET raw 1c', one, 'raw');
  line('raw node:http, fixed JSON (ceiling)', rawOne.value, rawOne.cores, 'raw node:http');
  const directOne = await runGet('GET direct 1c', one, 'direct');
  line('crm direct (x-svc-identity token)', directOne.value, directOne.cores, 'crm');
  const gwOne = await runGet('GET gateway 1c', one, 'gateway');
  line('gateway (key auth + rate limit + proxy)', gwOne.value, gwOne.cores, 'gateway');
  const pgGetOne = await runGetPgbench('GET pgbench 1c', 1, ONE_DURATION, ONE_WARMUP);
  line("reference: pgbench, crm's GET statements only", pgGetOne.value, pgGetOne.cores, 'postgres');
  const added = gwOne.value.p50us - directOne.value.p50us;
  say(
    `  added by the gateway at the median: gateway p50 - direct p50 = ${f0(added)} µs ` +
      `(target <= ${TARGET_ADDED_MEDIAN_US} µs: ${verdict(added <= TARGET_ADDED_MEDIAN_US)}); ` +
      `crm's own share of its median over the DB's: direct p50 - pgbench p50 = ${f0(directOne.value.p50us - pgGetOne.value.p50us)} µs`,
  );
  say();

  let gatewayOwnAdded = Number.NaN;
  let gatewayRawRatio = Number.NaN;
  if (STAGES) {
    const stageMany = { connections: C, durationS: STAGE_DURATION, warmupS: 1 };
    say(
      `## 1c. Gateway stages: where the gateway's time goes (${C} connections for ${STAGE_DURATION} s after 1 s; one connection as in 1b)`,
    );
    say('  healthz = Express + metrics middleware only; auth+limit = key look-up (cached) + Redis rate limit, then the');
    say("  gateway's own 404 for an unknown resource (no upstream); gateway->raw = a second gateway process whose crm");
    say('  upstream is the raw node:http server: the whole gateway path (auth, limit, proxy hop) with a free upstream.');
    gatewayRaw = await startGatewayInFrontOf(stack, raw.url, path.join(outDir, 'logs'), PROFILE ? profEnv('gateway-raw') : {});
    startedPids.set('gateway-raw', gatewayRaw.pid);
    header();
    const stage = async (
      label: string,
      url: string,
      headers: Record<string, string>,
      status: number,
      shape: typeof many,
      cpuOf: string,
    ) => {
      const r = await phase(label, () => measure({ url, headers, expectStatus: status, ...shape }));
      line(label, r.value, r.cores, cpuOf);
      return r.value;
    };
    const none = '/integrations/external/bench-none';
    const viaRaw = `${gatewayRaw.url}/integrations/external/leads/${s.leadId}`;
    const hzMany = await stage(`gateway /healthz ${C}c`, `${stack.gatewayUrl}/healthz`, {}, 200, stageMany, 'gateway');
    const alMany = await stage(`gateway auth+limit, 404 ${C}c`, `${stack.gatewayUrl}${none}`, keyAuth, 404, stageMany, 'gateway');
    const grMany = await stage(`gateway->raw GET ${C}c`, viaRaw, keyAuth, 200, stageMany, 'gateway-raw');
    const hzOne = await stage('gateway /healthz 1c', `${stack.gatewayUrl}/healthz`, {}, 200, one, 'gateway');
    const alOne = await stage('gateway auth+limit, 404 1c', `${stack.gatewayUrl}${none}`, keyAuth, 404, one, 'gateway');
    const grOne = await stage('gateway->raw GET 1c', viaRaw, keyAuth, 200, one, 'gateway-raw');
    await gatewayRaw.stop();
    gatewayRaw = undefined;
    gatewayOwnAdded = grOne.p50us - rawOne.value.p50us;
    gatewayRawRatio = ratio(grMany.rate, rawMany.value.rate);
    say(
      `  one connection, each median over the previous: express ${f0(hzOne.p50us - rawOne.value.p50us)} µs over raw; ` +
        `auth+limit ${f0(alOne.p50us - hzOne.p50us)} µs over healthz; proxy hop ${f0(grOne.p50us - alOne.p50us)} µs over auth+limit`,
    );
    say(
      `  the gateway's own added median (gateway->raw p50 - raw p50): ${f0(gatewayOwnAdded)} µs (in front of crm: ${f0(added)} µs); ` +
        `gateway->raw/raw req/s at ${C}c: ${f3(gatewayRawRatio)}`,
    );
    say(
      `  ${C} connections, req/s: healthz ${f1(hzMany.rate)}, auth+limit ${f1(alMany.rate)}, gateway->raw ${f1(grMany.rate)}, gateway->crm ${f1(gwMany.value.rate)}`,
    );
    say();
  }

  // Evidence for views_count (decision 0012): every GET queued one view; the folder moved them to lead_views and
  // into leads.views_count. Counted + queued = history + queued = every view recorded.
  say('## 1d. Lead views recorded by the GET runs (each GET queues one view; the folder counts them into leads.views_count)');
  for (const { label, id } of readLeads) {
    const [c] = await adminQuery<{ counted: number; queued: number; history: number }>(
      `select l.views_count counted, (select count(*)::int from crm.lead_view_queue q where q.lead_id = l.id) queued,
              (select count(*)::int from crm.lead_views v where v.lead_id = l.id) history
       from crm.leads l where l.id = '${id}'`,
      database,
    );
    say(`  ${label.padEnd(20)} lead ${id}: views_count ${c?.counted}, still queued ${c?.queued}, in lead_views ${c?.history}`);
  }
  say();

  say(
    `## 2. POST /integrations/external/leads {"title"}: lead creation (${C} connections for ${DURATION} s after ${WARMUP} s; one connection as in 1b)`,
  );
  header();
  const postSpec = (shape: typeof many): LoadSpec => ({
    url: `${stack!.gatewayUrl}/integrations/external/leads`,
    method: 'POST',
    headers: { ...keyAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Bench lead from autocannon' }),
    expectStatus: 201,
    ...shape,
  });
  const post = await sampledPhase(`POST gateway ${C}c`, () => measure(postSpec(many)));
  line('gateway POST lead (crm transaction + outbox)', post.value, post.cores, 'crm');
  const [pending] = await adminQuery<{ n: string }>('select count(*) as n from crm.outbox where published_at is null', database);
  const postOne = await phase('POST gateway 1c', () => measure(postSpec(one)));
  line('gateway POST lead, one connection', postOne.value, postOne.cores, 'crm');

  // The ceiling: the same statements by pgbench. The stack is stopped first so that crm's outbox relay
  // (woken by the pg_notify) does not publish pgbench's rows and compete for the CPU.
  const [payloadRow] = await adminQuery<{ payload: string; lead: string }>(
    `select o.payload::text as payload, (select to_jsonb(l)::text from crm.leads l where l.id = (o.payload->'lead'->>'id')::uuid) as lead
     from crm.outbox o where o.event_key = 'lead.created' order by o.id desc limit 1`,
    database,
  );
  await raw.stop();
  raw = undefined;
  await stack.stop();
  stack = undefined;
  const createScript = leadCreationScript(leadSql, { ...ids, leadRow: payloadRow!.lead, payload: payloadRow!.payload });
  const pgb = await sampledPhase(`POST pgbench ${C}c`, () =>
    pgbench(pgbenchSpec(`lead-create-${C}c`, createScript, C, DURATION, WARMUP), onPgbench),
  );
  const pr: PgbenchResult = pgb.value;
  line('pgbench, the same transaction (ceiling)', { ...pr, unexpected: pr.failed }, pgb.cores, 'postgres');
  const pgbOne = await phase('POST pgbench 1c', () =>
    pgbench(pgbenchSpec('lead-create-1c', createScript, 1, ONE_DURATION, ONE_WARMUP), onPgbench),
  );
  line('pgbench, the same transaction, one client', { ...pgbOne.value, unexpected: pgbOne.value.failed }, pgbOne.cores, 'postgres');
  const createOfPg = ratio(post.value.rate, pr.rate);
  say(
    `  ratio: gateway POST / pgbench ${f3(createOfPg)} (target >= ${TARGET_CREATE_OF_PGBENCH}: ${verdict(createOfPg >= TARGET_CREATE_OF_PGBENCH)}); ` +
      `one connection: ${f3(ratio(postOne.value.rate, pgbOne.value.rate))}`,
  );
  say(`  per-second responses (gateway POST): ${trend(post.value)}`);
  say(`  outbox rows not yet published right after the POST run: ${pending?.n}`);
  say(`  during gateway POST: ${formatActivity(post.activity)}`);
  say(`  during pgbench:      ${formatActivity(pgb.activity)}`);
  say(`  pgbench command: ${pr.command}`);
  say(`  script: ${path.relative(REPO_ROOT, pr.scriptFile)} (GET reference: ${path.relative(REPO_ROOT, pgGetMany.value.scriptFile)})`);
  say(`  (the stack was stopped before pgbench ran; crm's pool is ${poolMax} connections, pgbench opens ${C})`);
  say();

  say('## summary');
  say(
    `  GET ${C}c   req/s: gateway ${f1(gwMany.value.rate)} | crm direct ${f1(directMany.value.rate)} | raw node:http ${f1(rawMany.value.rate)}`,
  );
  say(
    `            gateway/raw ${f3(gwOfRaw)} -> ${verdict(gwOfRaw >= TARGET_GATEWAY_OF_RAW)} (target >= ${TARGET_GATEWAY_OF_RAW}); direct/raw ${f3(ratio(directMany.value.rate, rawMany.value.rate))}`,
  );
  say(
    `  GET 1c    p50 µs: gateway ${f0(gwOne.value.p50us)} | crm direct ${f0(directOne.value.p50us)} | raw ${f0(rawOne.value.p50us)}; ` +
      `gateway adds ${f0(added)} µs -> ${verdict(added <= TARGET_ADDED_MEDIAN_US)} (target <= ${TARGET_ADDED_MEDIAN_US})`,
  );
  if (STAGES)
    say(
      `            gateway in front of raw node:http: adds ${f0(gatewayOwnAdded)} µs at the median; ${f3(gatewayRawRatio)} of raw req/s at ${C}c`,
    );
  say(
    `  POST ${C}c  req/s: gateway ${f1(post.value.rate)} (p50 ${f0(post.value.p50us)} µs, p99 ${f0(post.value.p99us)} µs) | ` +
      `pgbench ${f1(pr.rate)} (p50 ${f0(pr.p50us)} µs, p99 ${f0(pr.p99us)} µs)`,
  );
  say(`            ratio ${f3(createOfPg)} -> ${verdict(createOfPg >= TARGET_CREATE_OF_PGBENCH)} (target >= ${TARGET_CREATE_OF_PGBENCH})`);
  say(
    disturbedPhases.length
      ? `  WARNING: processes outside the bench used > 0.15 cores during: ${disturbedPhases.join('; ')}. Their figures are disturbed.`
      : '  no phase was disturbed by processes outside the bench (each < 0.15 cores)',
  );
  writeFileSync(path.join(outDir, 'phases.json'), JSON.stringify(phases, null, 2));

  if (PROFILE) {
    say();
    say('## CPU profiles (node --cpu-prof), per phase');
    for (const proc of ['gateway', 'crm', 'gateway-raw']) {
      const dir = path.join(profDir, proc);
      const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
      const relevant = (name: string) =>
        proc === 'gateway-raw'
          ? name.startsWith('gateway->raw')
          : proc === 'crm'
            ? /^(GET direct|GET gateway|POST gateway)/.test(name)
            : /^(GET gateway|POST gateway)|healthz|auth\+limit/.test(name);
      for (const file of files) {
        for (const p of phases.filter((x) => relevant(x.name))) {
          say(`### ${proc} during "${p.name}" (${path.relative(REPO_ROOT, path.join(dir, file))})`);
          say(formatSummary(summarize(path.join(dir, file), { fromUs: p.fromUs, toUs: p.toUs })));
        }
      }
    }
  }
}

async function cleanup(): Promise<void> {
  const notes: string[] = [];
  await gatewayRaw?.stop().catch((e: Error) => notes.push(`gateway-raw: ${e.message}`));
  await raw?.stop().catch((e: Error) => notes.push(`raw server: ${e.message}`));
  await stack?.stop().catch((e: Error) => notes.push(`stack: ${e.message}`));
  if (databaseCreated) {
    await dropDatabase(database).then(
      () => notes.push(`dropped database ${database}`),
      (e: Error) => notes.push(`drop database: ${e.message}`),
    );
  }
  await deleteStream(natsStream).then(
    (ok) => notes.push(ok ? `deleted NATS stream ${natsStream}` : `NATS stream ${natsStream} not found`),
    (e: Error) => notes.push(`NATS stream: ${e.message}`),
  );
  await deleteRedisKeys(redisPrefix).then(
    (n) => notes.push(`deleted ${n} Redis keys ${redisPrefix}*`),
    (e: Error) => notes.push(`Redis keys: ${e.message}`),
  );
  const alive = [...startedPids].filter(([, pid]) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  say();
  say(`cleanup: ${notes.join('; ')}`);
  say(
    alive.length
      ? `cleanup: STILL RUNNING: ${alive.map(([n, p]) => `${n} (${p})`).join(', ')}`
      : `cleanup: all ${startedPids.size} processes started by the bench have exited (${[...startedPids].map(([n, p]) => `${n} ${p}`).join(', ')})`,
  );
}

let code = 0;
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`${sig}: stopping what the bench started ...\n`);
    void cleanup().finally(() => process.exit(130));
  });
}
try {
  await main();
} catch (err) {
  code = 1;
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
}
if (!interrupted) {
  await cleanup();
  process.exit(code);
}
