/**
 * `npm run bench:webhooks`: the webhook pipeline (crm outbox -> relay -> JetStream -> webhooks consumer ->
 * deliveries -> dispatcher -> receiver), each figure next to its ceiling measured in the same run. Prints,
 * never asserts. See bench/webhooks/README.md.
 *
 * (a) deliveries per second at saturation versus a plain POST loop from one process to the same receiver;
 * (b) latency from the producer's COMMIT to the receiver's arrival, at half the rate of (a).
 *
 * Knobs (environment): BENCH_WH_DURATION (10 s measured), BENCH_WH_WARMUP (3 s), BENCH_WH_LATENCY_DURATION
 * (10 s), BENCH_WH_RATE (the rate of (b); default half of (a)), BENCH_WH_LATENCY_ONLY=1 (only (b), at
 * BENCH_WH_RATE), BENCH_WH_CURVE (e.g. 300,600,900: (b) again at each of these rates, one line each),
 * BENCH_WH_BACKLOG (4000 events produced and not yet received, the most the producer lets queue up in (a)),
 * BENCH_WH_PROFILE=1 (node --cpu-prof on crm and webhooks, summarized per phase), BENCH_WH_DEBUG_SLOW=1 (when
 * and in which stage the events of (b) slower than 25 ms were late), BENCH_WH_CONCURRENCY (WEBHOOK_CONCURRENCY,
 * 128), BENCH_WH_PER_SUBSCRIPTION (WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY, 256).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Agent, request } from 'undici';
import { v7 as uuidv7 } from 'uuid';
import { AdminClient } from '../../scripts/demo.js';
import { launchStack, REPO_ROOT, type Stack } from '../../scripts/stack.js';
import { type CpuSnapshot, coresBusy, formatCores, snapshot } from '../lib/cpu.js';
import { formatSummary, monotonicUs, summarize } from '../lib/cpuprofile.js';
import { adminQuery, createDatabase, databaseUrl, NATS_URL, PG_ADMIN_URL, REDIS_URL, releaseResources, runBench } from '../lib/infra.js';
import { seed } from '../lib/seed.js';
import { percentile } from '../lib/stats.js';
import { PgCpu } from './pgcpu.js';

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};
const DURATION = num('BENCH_WH_DURATION', 10);
const WARMUP = num('BENCH_WH_WARMUP', 3);
const LATENCY_DURATION = num('BENCH_WH_LATENCY_DURATION', 10);
const FIXED_RATE = num('BENCH_WH_RATE', 0);
const BACKLOG = num('BENCH_WH_BACKLOG', 4000);
const PROFILE = process.env.BENCH_WH_PROFILE === '1';
/** Only (b), at BENCH_WH_RATE (for trying a change of the latency path quickly). */
const LATENCY_ONLY = process.env.BENCH_WH_LATENCY_ONLY === '1' && FIXED_RATE > 0;
/** Rates at which (b) runs again after the main run: where the latency target holds on this machine. */
const CURVE = (process.env.BENCH_WH_CURVE ?? '')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const CONCURRENCY = num('BENCH_WH_CONCURRENCY', 128);
const PER_SUBSCRIPTION = num('BENCH_WH_PER_SUBSCRIPTION', 256);
// The webhooks service's undici Agent: 64 keep-alive connections per origin, no pipelining (sender.ts).
const SENDER_CONNECTIONS = 64;

const TARGET_OF_POST_LOOP = 0.3;
const TARGET_RATE = 1000;
const TARGET_P99_MS = 25;

const runId = `${Date.now()}`;
const database = `svc_bench_wh_${runId}`;
const natsStream = `BENCHWH_${runId}`;
const subjectPrefix = `benchwh${runId}`;
const redisPrefix = `benchwh${runId}:`;
const outDir = path.join(REPO_ROOT, '.data', 'bench-webhooks', runId);
const profDir = path.join(outDir, 'prof');
const here = path.dirname(fileURLToPath(import.meta.url));

const say = (s = '') => process.stdout.write(`${s}\n`);
const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toString() : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const verdict = (ok: boolean) => (ok ? 'PASS' : 'BELOW');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------
// The receiver (a child process) and its IPC.

class Receiver {
  private readonly waiting: ((m: Record<string, unknown>) => void)[] = [];
  url = '';
  constructor(readonly child: ChildProcess) {
    child.on('message', (m: Record<string, unknown>) => {
      if ('listening' in m) return;
      this.waiting.shift()?.(m);
    });
  }
  static async start(): Promise<Receiver> {
    const child = fork(path.join(here, 'receiver.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const r = new Receiver(child);
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the receiver did not start within 20 s')), 20_000);
      child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
      child.on('message', (m: { listening?: number }) => {
        if (m.listening) {
          clearTimeout(timer);
          resolve(m.listening);
        }
      });
    });
    r.url = `http://127.0.0.1:${port}/hook`;
    return r;
  }
  private ask<T>(cmd: string): Promise<T> {
    return new Promise((resolve) => {
      this.waiting.push(resolve as (m: Record<string, unknown>) => void);
      this.child.send({ cmd });
    });
  }
  count = () => this.ask<{ count: number; unique: number }>('count');
  take = async () => new Map((await this.ask<{ receipts: [string, number][] }>('take')).receipts);
  reset = () => this.ask<{ ok: true }>('reset');
  get pid() {
    return this.child.pid!;
  }
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The producer: events written straight into crm's outbox, each transaction one round trip, leaving what
// recordEvents leaves in a service's transaction: the outbox rows (no notification: a service wakes its own relay
// in-process after the commit, decision 0033). The producer is not crm's process and cannot do that: crm's relay
// here looks every 5 ms even when idle (OUTBOX_SWEEP_MS=5), as it polls while events flow anyway; at the rates of
// (a) and (b) events always flow, and a service's own wake-up would find them no sooner. The rows are written by a
// PL/pgSQL function of the bench's own (public.bench_emit) from the payload kept in a table, so a commit is one
// prepared statement: the producer's own cost (it shares the two cores) stays small.

class Producer {
  private readonly clients: pg.Client[] = [];
  produced = 0;
  constructor(
    private readonly companyId: string,
    private readonly payloadJson: string,
  ) {}
  async open(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const c = new pg.Client({ connectionString: databaseUrl(database), application_name: 'bench-producer' });
      await c.connect();
      this.clients.push(c);
    }
    const c = this.clients[0]!;
    await c.query('create table if not exists public.bench_payload (payload jsonb not null)');
    await c.query('insert into public.bench_payload (payload) values ($1::jsonb)', [this.payloadJson]);
    await c.query(`create or replace function public.bench_emit(ids uuid[], company uuid) returns void language plpgsql as $fn$
      begin
        insert into crm.outbox (id, company_id, event_key, payload, occurred_at)
          select i, company, 'lead.created', (select payload from public.bench_payload limit 1), now() from unnest(ids) i;
      end $fn$`);
  }
  get size() {
    return this.clients.length;
  }
  /** One transaction of `n` events on connection `i`; returns their ids and the monotonic µs right after COMMIT returned. */
  async commit(i: number, n: number): Promise<{ ids: string[]; committedUs: number; committedWallMs: number }> {
    const c = this.clients[i]!;
    const ids = Array.from({ length: n }, () => uuidv7());
    await c.query({ name: 'bench-emit', text: 'select public.bench_emit($1::uuid[], $2::uuid)', values: [ids, this.companyId] });
    const committedUs = monotonicUs();
    const committedWallMs = performance.timeOrigin + performance.now();
    this.produced += n;
    return { ids, committedUs, committedWallMs };
  }
  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.end().catch(() => undefined)));
  }
}

// ---------------------------------------------------------------------------------------------------------

let stack: Stack | undefined;
let receiver: Receiver | undefined;
let producer: Producer | undefined;
let pgCpu: PgCpu | undefined;
const run = { database, databaseCreated: false, natsStream, redisPrefix };
let crashed: string | undefined;

interface Phase {
  name: string;
  fromUs: number;
  toUs: number;
}
const phases: Phase[] = [];

function cpuTargets() {
  const pids: Record<string, number | undefined> = {};
  if (stack) for (const [name, pid] of Object.entries(stack.pids)) pids[name] = pid;
  if (receiver) pids.receiver = receiver.pid;
  return { pids, comms: ['postgres', 'nats-server', 'redis-server'] };
}

interface PhaseResult<T> {
  value: T;
  cores: Record<string, number>;
  /** Postgres's share of `cores` by client (application_name), server processes and other databases. */
  pgCores: Record<string, number>;
  /** The webhooks service's delivery counters (webhook_* on /metrics) over the phase. */
  counters: Record<string, number>;
  seconds: number;
}

/** The webhooks service's webhook_* counters, `name{labels}` -> value. */
async function webhookCounters(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  if (!stack) return out;
  const text = await (await fetch(`${stack.metricsUrls.webhooks}/metrics`)).text();
  for (const line of text.split('\n')) {
    const m = /^(webhook_[a-z_]+)\{([^}]*)\} ([0-9.e+-]+)$/.exec(line);
    if (!m) continue;
    const labels = m[2]!
      .split(',')
      .filter((l) => !l.startsWith('service='))
      .join(',');
    out[`${m[1]}{${labels}}`] = Number(m[3]);
  }
  return out;
}

const counterDelta = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v - (a[k] ?? 0)]));

/** Where the phase's deliveries came from and how many rows each hot statement carried on average. */
function pathLine(c: Record<string, number>): string {
  const get = (k: string) => c[k] ?? 0;
  const issued = get('webhook_attempts_started_total{source="issued"}');
  const claimed = get('webhook_attempts_started_total{source="claimed"}');
  const per = (kind: string) => {
    const n = get(`webhook_delivery_statements_total{kind="${kind}"}`);
    return `${kind} ${n} (${n ? f1(get(`webhook_delivery_statement_rows_total{kind="${kind}"}`) / n) : '-'} rows each)`;
  };
  return `attempts started: ${issued} leased at issue, ${claimed} claimed; statements: ${['issue', 'claim', 'record'].map(per).join(', ')}`;
}

async function phase<T>(name: string, work: () => Promise<T>): Promise<PhaseResult<T>> {
  if (crashed) throw new Error(crashed);
  const countersBefore = await webhookCounters();
  const pgBefore = await pgCpu!.snapshot();
  const before: CpuSnapshot = snapshot(cpuTargets());
  const fromUs = monotonicUs();
  const value = await work();
  const toUs = monotonicUs();
  const cores = coresBusy(before, snapshot(cpuTargets()));
  const pgCores = PgCpu.cores(pgBefore, await pgCpu!.snapshot());
  const counters = counterDelta(countersBefore, await webhookCounters());
  phases.push({ name, fromUs, toUs });
  if (crashed) throw new Error(crashed);
  return { value, cores, pgCores, counters, seconds: (toUs - fromUs) / 1e6 };
}

const disturbed: string[] = [];
/**
 * "Other processes" (anything outside the bench) plus the Postgres backends of other databases (and short-lived
 * backends) are someone else's load; about 0.15 core of "other" is normal in the POST loop (loopback network softirq belongs to no
 * process). `deliveries`: how many the phase made, to print the phase's CPU time per delivery.
 */
/**
 * Postgres by client, where the CPU of backends that came and went within the phase (not ours: the bench opens none
 * then) counts as other databases': load from outside, like theirs.
 */
function pgByClient(r: PhaseResult<unknown>): Record<string, number> {
  const pgCores = { ...r.pgCores };
  const attributed = Object.values(pgCores).reduce((n, c) => n + c, 0);
  pgCores['other databases'] = (pgCores['other databases'] ?? 0) + Math.max(0, (r.cores.postgres ?? 0) - attributed);
  return pgCores;
}

/** Cores used by the bench's processes, and by everything else on the machine. */
function coresSplit(r: PhaseResult<unknown>): { ours: number; outside: number } {
  const outsidePg = pgByClient(r)['other databases'] ?? 0;
  const outside = (r.cores['other processes'] ?? 0) + outsidePg;
  const all = Object.values(r.cores).reduce((n, c) => n + c, 0);
  return { ours: all - outside, outside };
}

const cpuLine = (phaseName: string, r: PhaseResult<unknown>, deliveries?: number) => {
  const { cores } = r;
  const pgCores = pgByClient(r);
  const other = coresSplit(r).outside;
  const flag = other > 0.3 ? `   DISTURBED: ${other.toFixed(2)} cores used by processes outside the bench` : '';
  if (flag) disturbed.push(phaseName);
  say(`      cpu cores: ${formatCores(cores).replace('bench (autocannon)', 'bench (producer/POST loop)')}${flag}`);
  say(`      postgres by client: ${formatCores(pgCores)}`);
  if (Object.keys(r.counters).length) say(`      webhooks: ${pathLine(r.counters)}`);
  if (deliveries && deliveries > 0) {
    const ours = Object.entries(cores).filter(([k]) => k !== 'other processes');
    const us = (c: number) => Math.round((c * r.seconds * 1e6) / deliveries);
    const total = ours.reduce((n, [, c]) => n + c, 0) - (pgCores['other databases'] ?? 0);
    const pgOurs = Object.entries(pgCores).filter(([k]) => k !== 'other databases');
    say(
      `      cpu per delivery (µs): total ${us(total)}; ${ours
        .filter(([, c]) => c >= 0.005)
        .sort((a, b) => b[1] - a[1])
        .map(([k, c]) => `${k.replace('bench (autocannon)', 'bench')} ${us(k === 'postgres' ? c - (pgCores['other databases'] ?? 0) : c)}`)
        .join(', ')}`,
    );
    say(
      `        of which postgres for: ${pgOurs
        .filter(([, c]) => c >= 0.005)
        .sort((a, b) => b[1] - a[1])
        .map(([k, c]) => `${k} ${us(c)}`)
        .join(', ')}`,
    );
  }
};

/** The ceiling: a plain POST loop from this process, the same body, headers of the same shape and the sender's Agent. */
async function postLoop(
  url: string,
  body: string,
  seconds: number,
  warmup: number,
): Promise<{ rate: number; errors: number; requests: number }> {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: SENDER_CONNECTIONS, pipelining: 1 });
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'svc-webhooks/1.0',
    'x-svc-event': 'lead.created',
    'x-svc-signature': `sha256=${'0'.repeat(64)}`,
    'webhook-id': '00000000-0000-0000-0000-000000000000',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': `v1,${'A'.repeat(44)}`,
  };
  let done = 0;
  let errors = 0;
  let stop = false;
  const worker = async () => {
    while (!stop) {
      try {
        const res = await request(url, { method: 'POST', headers, body, dispatcher: agent });
        for await (const _ of res.body);
        if (res.statusCode === 200) done++;
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  const workers = Array.from({ length: CONCURRENCY }, worker);
  await sleep(warmup * 1000);
  const from = done;
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const rate = ((done - from) * 1000) / (performance.now() - t0);
  stop = true;
  await Promise.all(workers);
  await agent.close();
  return { rate, errors, requests: done };
}

/**
 * (a) Saturation: the producer keeps at most BACKLOG events between its commits and the receiver, writing
 * transactions of 20 events on 2 connections as fast as that allows; the rate is what the receiver got.
 */
async function saturate(r: Receiver, p: Producer): Promise<{ rate: number; perSecond: number[]; produced: number; delivered: number }> {
  await r.reset();
  let received = 0;
  let stop = false;
  const base = p.produced;
  const poller = (async () => {
    while (!stop) {
      received = (await r.count()).unique;
      await sleep(20);
    }
  })();
  const writer = async (i: number) => {
    while (!stop) {
      if (p.produced - base - received > BACKLOG) {
        await sleep(5);
        continue;
      }
      await p.commit(i, 20);
    }
  };
  const writers = [writer(0), writer(1)];
  await sleep(WARMUP * 1000);
  const perSecond: number[] = [];
  const t0 = performance.now();
  const c0 = (await r.count()).unique;
  let last = c0;
  for (let s = 0; s < DURATION; s++) {
    await sleep(Math.max(0, t0 + (s + 1) * 1000 - performance.now()));
    const c = (await r.count()).unique;
    perSecond.push(c - last);
    last = c;
  }
  const rate = ((last - c0) * 1000) / (performance.now() - t0);
  stop = true;
  await Promise.all([...writers, poller]);
  return { rate, perSecond, produced: p.produced - base, delivered: (await r.count()).unique };
}

/** Waits until the receiver has every id, or the deadline passes; returns how many are missing. */
async function drain(r: Receiver, expected: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { unique } = await r.count();
    if (unique >= expected || Date.now() > deadline) return Math.max(0, expected - unique);
    await sleep(100);
  }
}

/**
 * (b) Latency at a fixed rate: one event per transaction, started on a fixed schedule (every 2 ms the
 * events due by then), spread over the producer's connections; commit time taken when COMMIT returns.
 */
async function atRate(r: Receiver, p: Producer, rate: number, seconds: number) {
  await r.reset();
  const committed = new Map<string, number>();
  const committedWall = new Map<string, number>();
  const total = Math.round(rate * seconds);
  let started = 0;
  let lagged = 0;
  const busy = new Array(p.size).fill(0);
  const inflight = new Set<Promise<void>>();
  const t0 = performance.now();
  while (started < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
    for (; started < due; started++) {
      // The least busy connection (pg queues queries per connection).
      let i = 0;
      for (let k = 1; k < busy.length; k++) if (busy[k] < busy[i]) i = k;
      if (busy[i] > 0) lagged++;
      busy[i]++;
      const q = p.commit(i, 1).then(({ ids, committedUs, committedWallMs }) => {
        busy[i]--;
        committed.set(ids[0]!, committedUs);
        committedWall.set(ids[0]!, committedWallMs);
      });
      inflight.add(q);
      q.finally(() => inflight.delete(q));
    }
    await sleep(2);
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - t0) / 1000;
  const missing = await drain(r, total, 30_000);
  return { committed, committedWall, total, elapsed, lagged, missing };
}

/** Latencies of a run of atRate, and where the time went (outside the phase: its CPU is not the pipeline's). */
async function latencies(r: Receiver, run: Awaited<ReturnType<typeof atRate>>) {
  const { committed, committedWall, total, elapsed, lagged, missing } = run;
  const receipts = await r.take();
  const lat: number[] = [];
  for (const [id, at] of committed) {
    const got = receipts.get(id);
    if (got !== undefined) lat.push((got - at) / 1000);
  }
  const sorted = Float64Array.from(lat).sort();
  if (process.env.BENCH_WH_DEBUG_SLOW) {
    const t0 = Math.min(...committed.values());
    const slow = [...committed]
      .map(([id, at]) => [(at - t0) / 1000, ((receipts.get(id) ?? at) - at) / 1000] as const)
      .filter(([, l]) => l > 25);
    say(
      `  slow (>25 ms) events: ${slow.length}; at (ms since start): ${slow.map(([t, l]) => `${t.toFixed(0)}:${l.toFixed(0)}`).join(' ')}`,
    );
  }
  // Where the time went, from the rows' own timestamps (wall clock, µs): the relay's transaction start
  // (published_at = now() of the transaction that claimed and marked it), the consumer's insert of the
  // delivery, and the recorded attempt (after the 2xx).
  const stageRows = await adminQuery<{ id: string; published: Date; issued: Date; attempted: Date }>(
    `select o.id, o.published_at as published, d.created_at as issued, a.at as attempted
       from crm.outbox o join webhooks.deliveries d on d.event_id = o.id::text
       join webhooks.delivery_attempts a on a.delivery_id = d.id
      where o.id in (${[...committedWall.keys()].map((id) => `'${id}'`).join(',')})`,
    database,
  );
  // Each relay transaction stamps its rows with its own now(): distinct stamps are the relay's batches.
  const [batches] = await adminQuery<{ relay: string; events: string }>(
    `select count(distinct published_at) as relay, count(*) as events from crm.outbox
      where id in (${[...committedWall.keys()].map((id) => `'${id}'`).join(',')})`,
    database,
  );
  const relayBatch = Number(batches?.events ?? 0) / Math.max(1, Number(batches?.relay ?? 0));
  if (process.env.BENCH_WH_DEBUG_SLOW) {
    const t0 = Math.min(...committedWall.values());
    const rows = stageRows
      .map((r) => {
        const c = committedWall.get(r.id)!;
        return {
          at: c - t0,
          total: r.attempted.getTime() - c,
          relay: r.published.getTime() - c,
          issue: r.issued.getTime() - r.published.getTime(),
          send: r.attempted.getTime() - r.issued.getTime(),
        };
      })
      .filter((r) => r.total > 25)
      .sort((a, b) => a.at - b.at);
    say(
      `  slow stages (at: commit->relay/relay->issued/issued->recorded): ${rows.map((r) => `${r.at.toFixed(0)}: ${r.relay.toFixed(0)}/${r.issue}/${r.send}`).join('  ')}`,
    );
  }
  const stage = (f: (r: (typeof stageRows)[number], c: number) => number) => {
    const v = Float64Array.from(stageRows.map((r) => f(r, committedWall.get(r.id)!))).sort();
    return `p50 ${f1(percentile(v, 50))} / p99 ${f1(percentile(v, 99))}`;
  };
  const stages = [
    `commit -> relay transaction start ${stage((r, c) => r.published.getTime() - c)}`,
    `relay transaction start -> delivery inserted ${stage((r) => r.issued.getTime() - r.published.getTime())}`,
    `delivery inserted -> attempt recorded ${stage((r) => r.attempted.getTime() - r.issued.getTime())}`,
  ];
  return {
    relayBatch,
    stages,
    offered: total / elapsed,
    count: sorted.length,
    missing,
    lagged,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const cpus = os.cpus();
  const [pgVersion] = await adminQuery<{ server_version: string }>('show server_version');
  say('Webhook pipeline benchmark');
  say(
    `  machine: ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB; Node ${process.version}; Postgres ${pgVersion?.server_version}`,
  );
  say(
    `  receiver: node:http in its own process answering 200 at once; webhooks WEBHOOK_CONCURRENCY=${CONCURRENCY}, WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY=${PER_SUBSCRIPTION}`,
  );
  say(`  database ${database}, stream ${natsStream}, logs ${path.join(outDir, 'logs')}`);

  await createDatabase(database);
  run.databaseCreated = true;
  pgCpu = new PgCpu(PG_ADMIN_URL, database);
  await pgCpu.open();
  receiver = await Receiver.start();
  const profEnv = (name: string): Record<string, string> =>
    PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.join(profDir, name)}` } : {};
  const adminToken = randomBytes(24).toString('hex');
  stack = await launchStack({
    databaseUrl: databaseUrl(database),
    natsUrl: NATS_URL,
    redisUrl: REDIS_URL,
    adminToken,
    identityTokenSecret: randomBytes(32).toString('hex'),
    servicePorts: 'free',
    gatewayPort: 0,
    natsStream,
    eventSubjectPrefix: subjectPrefix,
    redisKeyPrefix: redisPrefix,
    logLevel: 'warn',
    logDir: path.join(outDir, 'logs'),
    webhookAllowPrivateNetworks: 'true',
    // PGAPPNAME (read by pg): Postgres CPU is split by the service its backends work for.
    processEnv: {
      webhooks: {
        PGAPPNAME: 'webhooks',
        WEBHOOK_CONCURRENCY: String(CONCURRENCY),
        WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: String(PER_SUBSCRIPTION),
        ...profEnv('webhooks'),
      },
      // The producer's commits cannot wake crm's relay in-process, as crm's own would: it looks every 5 ms instead.
      crm: { PGAPPNAME: 'crm', OUTBOX_SWEEP_MS: '5', ...profEnv('crm') },
      tasks: { PGAPPNAME: 'tasks' },
      chat: { PGAPPNAME: 'chat' },
      files: { PGAPPNAME: 'files' },
      gateway: { PGAPPNAME: 'gateway' },
    },
    consoleSink: (l) => process.stderr.write(`${l}\n`),
    onUnexpectedExit: (name, info) => {
      crashed = `${name} exited unexpectedly (${JSON.stringify(info)})`;
      process.stderr.write(`${crashed}\n`);
    },
  });

  // The tenant: a company with one active subscription to the receiver.
  const seeded = await seed(stack.gatewayUrl, adminToken);
  await new AdminClient(stack.gatewayUrl, adminToken).create(`/companies/${seeded.companyId}/webhooks`, {
    url: receiver.url,
    events: ['lead.created'],
  });
  // A real LeadSnapshot: the payload of the seed lead's lead.created event.
  const [row] = await adminQuery<{ payload: Record<string, unknown> }>(
    `select payload from crm.outbox where event_key = 'lead.created' order by id limit 1`,
    database,
  );
  if (!row) throw new Error('no lead.created event in crm.outbox after the seed');
  const payloadJson = JSON.stringify(row.payload);
  const envelope = JSON.stringify({ event_id: uuidv7(), event_key: 'lead.created', payload: row.payload });
  say(`  payload: the seed lead's LeadSnapshot, ${payloadJson.length} bytes; delivery body ${envelope.length} bytes`);
  producer = new Producer(seeded.companyId, payloadJson);
  await producer.open(16);
  await receiver.reset();
  for (let i = 0; i < 10; i++) await producer.commit(0, 50);
  await drain(receiver, 500, 30_000);

  say();
  let saturatedRate = 0;
  if (!LATENCY_ONLY) {
    say('(a) throughput, receiver answering 200 at once');
    // crm's relay looks every 5 ms here (the producer cannot wake it as crm's own commits would); idle in a real
    // service, it would take no CPU from the ceiling: crm is paused while the POST loop runs.
    const crmPid = stack.pids.crm;
    if (crmPid) process.kill(crmPid, 'SIGSTOP');
    const loop = await phase('post-loop', () =>
      postLoop(receiver!.url, envelope, DURATION, 2).finally(() => crmPid && process.kill(crmPid, 'SIGCONT')),
    );
    say(
      `  ceiling: POST loop, one process, ${CONCURRENCY} concurrent over ${SENDER_CONNECTIONS} keep-alive connections: ${f0(loop.value.rate)} req/s` +
        (loop.value.errors ? `  (${loop.value.errors} errors)` : ''),
    );
    cpuLine('POST loop', loop, loop.value.requests);
    const sat = await phase('saturation', () => saturate(receiver!, producer!));
    say(
      `  pipeline: outbox -> receiver, backlog <= ${BACKLOG}: ${f0(sat.value.rate)} deliveries/s   per second: ${sat.value.perSecond.join(' ')}`,
    );
    cpuLine('pipeline throughput', sat, sat.value.delivered);
    const missingA = await drain(receiver, sat.value.produced, 60_000);
    const counts = await receiver.count();
    say(
      `  after the producer stopped: ${missingA} of ${sat.value.produced} events not received within 60 s; ${counts.count - counts.unique} duplicate receipts`,
    );
    const ofLoop = sat.value.rate / loop.value.rate;
    say(`  ratio pipeline / POST loop: ${f2(ofLoop)}   target >= ${TARGET_OF_POST_LOOP}: ${verdict(ofLoop >= TARGET_OF_POST_LOOP)}`);
    say(`  deliveries/s: ${f0(sat.value.rate)}   target >= ${TARGET_RATE}: ${verdict(sat.value.rate >= TARGET_RATE)}`);
    saturatedRate = sat.value.rate;
  }

  say();
  const rate = FIXED_RATE > 0 ? FIXED_RATE : Math.max(1, Math.round(saturatedRate / 2));
  say(
    `(b) latency, commit -> receiver, at ${rate} events/s (${FIXED_RATE > 0 ? 'BENCH_WH_RATE' : 'half of (a)'}) for ${LATENCY_DURATION} s, one event per transaction`,
  );
  // Without (a) before it, the processes' code is still cold: BENCH_WH_WARMUP seconds at the rate first, not measured.
  if (LATENCY_ONLY) await atRate(receiver, producer, rate, WARMUP);
  const lat = await phase('latency', () => atRate(receiver!, producer!, rate, LATENCY_DURATION));
  const l = await latencies(receiver, lat.value);
  say(
    `  offered ${f0(l.offered)} events/s, ${l.count} measured${l.missing ? `, ${l.missing} MISSING` : ''}${l.lagged ? `, ${l.lagged} commits queued behind others on the producer` : ''}`,
  );
  say(
    `  p50 ${f1(l.p50)} ms   p90 ${f1(l.p90)} ms   p99 ${f1(l.p99)} ms   max ${f1(l.max)} ms   target p99 < ${TARGET_P99_MS} ms: ${verdict(l.p99 < TARGET_P99_MS)}`,
  );
  say(`  stages (ms, wall clock, Postgres timestamps have ms precision here): ${l.stages.join('; ')}`);
  say(`  relay: ${f1(l.relayBatch)} events per transaction`);
  cpuLine('latency', lat, l.count);
  if (CURVE.length) {
    say();
    say(`(b) again at other rates, ${LATENCY_DURATION} s each, one event per transaction`);
    for (const r of CURVE) {
      const run = await phase(`latency at ${r}/s`, () => atRate(receiver!, producer!, r, LATENCY_DURATION));
      const c = await latencies(receiver, run.value);
      const { ours: busy, outside: other } = coresSplit(run);
      if (other > 0.3) disturbed.push(`latency at ${r}/s`);
      say(
        `  ${String(r).padStart(5)}/s asked, ${f0(c.offered)} offered: p50 ${f1(c.p50)}  p90 ${f1(c.p90)}  p99 ${f1(c.p99)}  max ${f1(c.max)} ms` +
          `${c.missing ? `  ${c.missing} MISSING` : ''}; cores busy ${f2(busy)} (${f2(other)} outside the bench)` +
          `; cpu per delivery ${f0((busy * run.seconds * 1e6) / Math.max(1, c.count))} µs; relay ${f1(c.relayBatch)} events per transaction` +
          `${other > 0.3 ? '   DISTURBED' : ''}`,
      );
    }
  }
  if (disturbed.length) say(`\nDISTURBED phases (other load on the machine; figures not representative): ${disturbed.join(', ')}`);
}

async function profiles(): Promise<void> {
  if (!PROFILE) return;
  for (const name of ['webhooks', 'crm']) {
    const dir = path.join(profDir, name);
    if (!existsSync(dir)) continue;
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) continue;
    for (const ph of phases.filter((p) => p.name !== 'post-loop')) {
      say();
      say(`profile of ${name} during ${ph.name} (${path.join(dir, file)}):`);
      say(formatSummary(summarize(path.join(dir, file), ph), 12));
    }
  }
}

await runBench(main, async () => {
  const notes: string[] = [];
  await producer?.close();
  await pgCpu?.close();
  await stack?.stop().catch((e: Error) => notes.push(`stack: ${e.message}`));
  await receiver?.stop().catch((e: Error) => notes.push(`receiver: ${e.message}`));
  notes.push(...(await releaseResources(run)));
  await profiles().catch((e: Error) => say(`profiles: ${e.message}`));
  say();
  say(`cleanup: stopped the stack and the receiver; ${notes.join('; ')}`);
});
