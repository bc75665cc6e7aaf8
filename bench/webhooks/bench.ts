/**
 * The webhook pipeline (`npm run bench:webhooks`, and a part of `npm run bench:all`): crm outbox -> relay -> JetStream
 * -> webhooks consumer -> deliveries -> dispatcher -> receiver, each figure next to its ceiling measured in the same
 * run. Prints, never asserts; returns the figures of issue 20. See bench/webhooks/README.md.
 *
 * (a) deliveries per second at saturation versus a plain POST loop from one process to the same receiver;
 * (b) latency from the producer's COMMIT to the receiver's arrival, at a fixed rate (half of (a) unless set).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { AdminClient } from '../../scripts/demo.js';
import { launchStack, REPO_ROOT, type Stack } from '../../scripts/stack.js';
import { type CpuSnapshot, coresBusy, formatCores, snapshot } from '../lib/cpu.js';
import { monotonicUs, phaseProfiles } from '../lib/cpuprofile.js';
import { f0, f1, f2, ratio, say, verdict } from '../lib/harness.js';
import { adminQuery, benchStackOptions, createDatabase, databaseUrl, PG_ADMIN_URL, releaseResources, withCleanup } from '../lib/infra.js';
import { DirtyWatch, writeBack } from '../lib/pagecache.js';
import { seed } from '../lib/seed.js';
import { type BenchFigures, meets, targetText } from '../lib/targets.js';
import { Producer, Receiver } from './ends.js';
import { atRate, drain, latencies, postLoop, SENDER_CONNECTIONS, saturate } from './loads.js';
import { PgCpu } from './pgcpu.js';

export interface WebhookSettings {
  /** (a) measured for durationS after warmupS. */
  durationS: number;
  warmupS: number;
  /** (b) measured for latencyDurationS at `rate` events/s (0: half of (a)). */
  latencyDurationS: number;
  rate: number;
  /** Events produced and not yet received, the most the producer lets queue up in (a). */
  backlog: number;
  /** Only (b), at `rate` (for trying a change of the latency path quickly). */
  latencyOnly: boolean;
  /** Rates at which (b) runs again after the main run: where the latency target holds on this machine. */
  curve: number[];
  /** node --cpu-prof on crm and webhooks, summarized per phase. */
  profile: boolean;
  /**
   * Write the dirty page cache back before (b): what (a) wrote (about 0.5 GB) is otherwise written back in one burst
   * during (b), and every commit's fsync waits behind it (decision 0269).
   */
  writeBackBeforeLatency: boolean;
  /** WEBHOOK_CONCURRENCY and WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY of the webhooks service. */
  concurrency: number;
  perSubscription: number;
}

export type WebhookFigures = BenchFigures<'webhooks_vs_post_loop' | 'webhooks_p99_ms_at_1000'>;

/** Deliveries per second the pipeline should reach whatever the ceiling. */
const TARGET_RATE = 1000;

interface PhaseResult<T> {
  name: string;
  value: T;
  cores: Record<string, number>;
  /** Postgres's share of `cores` by client (application_name), server processes and other databases. */
  pgCores: Record<string, number>;
  /** The webhooks service's delivery counters (webhook_* on /metrics) over the phase. */
  counters: Record<string, number>;
  seconds: number;
}

/** The webhooks service's webhook_* counters, `name{labels}` -> value. */
async function webhookCounters(stack: Stack | undefined): Promise<Record<string, number>> {
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

/** Runs the bench on its own stack and database, removed afterwards. */
export function benchWebhooks(settings: WebhookSettings): Promise<WebhookFigures> {
  const run = new WebhooksRun(settings);
  return withCleanup(
    () => run.main(),
    () => run.cleanup(),
  );
}

class WebhooksRun {
  private readonly runId = `${Date.now()}`;
  private readonly database = `svc_bench_wh_${this.runId}`;
  private readonly natsStream = `BENCHWH_${this.runId}`;
  private readonly subjectPrefix = `benchwh${this.runId}`;
  private readonly redisPrefix = `benchwh${this.runId}:`;
  private readonly outDir = path.join(REPO_ROOT, '.data', 'bench-webhooks', this.runId);
  private readonly profDir = path.join(this.outDir, 'prof');
  private readonly resources = {
    database: this.database,
    databaseCreated: false,
    natsStream: this.natsStream,
    redisPrefix: this.redisPrefix,
  };
  private stack: Stack | undefined;
  private receiver: Receiver | undefined;
  private producer: Producer | undefined;
  private pgCpu: PgCpu | undefined;
  private crashed: string | undefined;
  private readonly phases: { name: string; fromUs: number; toUs: number }[] = [];
  private readonly disturbed: string[] = [];

  constructor(private readonly s: WebhookSettings) {}

  private cpuTargets() {
    const pids: Record<string, number | undefined> = {};
    if (this.stack) for (const [name, pid] of Object.entries(this.stack.pids)) pids[name] = pid;
    if (this.receiver) pids.receiver = this.receiver.pid;
    return { pids, comms: ['postgres', 'nats-server', 'redis-server'] };
  }

  private async phase<T>(name: string, work: () => Promise<T>): Promise<PhaseResult<T>> {
    if (this.crashed) throw new Error(this.crashed);
    const countersBefore = await webhookCounters(this.stack);
    const pgBefore = await this.pgCpu!.snapshot();
    const before: CpuSnapshot = snapshot(this.cpuTargets());
    const fromUs = monotonicUs();
    const value = await work();
    const toUs = monotonicUs();
    const cores = coresBusy(before, snapshot(this.cpuTargets()));
    const pgCores = PgCpu.cores(pgBefore, await this.pgCpu!.snapshot());
    const counters = counterDelta(countersBefore, await webhookCounters(this.stack));
    this.phases.push({ name, fromUs, toUs });
    if (this.crashed) throw new Error(this.crashed);
    return { name, value, cores, pgCores, counters, seconds: (toUs - fromUs) / 1e6 };
  }

  private cpuLine(r: PhaseResult<unknown>, deliveries?: number): void {
    const { cores } = r;
    const pgCores = pgByClient(r);
    const other = coresSplit(r).outside;
    const flag = other > 0.3 ? `   DISTURBED: ${other.toFixed(2)} cores used by processes outside the bench` : '';
    if (flag) this.disturbed.push(r.name);
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
          .map(
            ([k, c]) => `${k.replace('bench (autocannon)', 'bench')} ${us(k === 'postgres' ? c - (pgCores['other databases'] ?? 0) : c)}`,
          )
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
  }

  async main(): Promise<WebhookFigures> {
    mkdirSync(this.outDir, { recursive: true });
    const cpus = os.cpus();
    const [pgVersion] = await adminQuery<{ server_version: string }>('show server_version');
    say('Webhook pipeline benchmark');
    say(
      `  machine: ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB; Node ${process.version}; Postgres ${pgVersion?.server_version}`,
    );
    say(
      `  receiver: node:http in its own process answering 200 at once; webhooks WEBHOOK_CONCURRENCY=${this.s.concurrency}, WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY=${this.s.perSubscription}`,
    );
    say(`  database ${this.database}, stream ${this.natsStream}, logs ${path.join(this.outDir, 'logs')}`);

    await createDatabase(this.database);
    this.resources.databaseCreated = true;
    this.pgCpu = new PgCpu(PG_ADMIN_URL, this.database);
    await this.pgCpu.open();
    this.receiver = await Receiver.start();
    const profEnv = (name: string): Record<string, string> =>
      this.s.profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.join(this.profDir, name)}` } : {};
    const adminToken = randomBytes(24).toString('hex');
    this.stack = await launchStack({
      ...benchStackOptions({
        database: this.database,
        natsStream: this.natsStream,
        subjectPrefix: this.subjectPrefix,
        redisPrefix: this.redisPrefix,
        outDir: this.outDir,
        adminToken,
        identitySecret: randomBytes(32).toString('hex'),
      }),
      webhookAllowPrivateNetworks: 'true',
      // PGAPPNAME (read by pg): Postgres CPU is split by the service its backends work for.
      processEnv: {
        webhooks: {
          PGAPPNAME: 'webhooks',
          WEBHOOK_CONCURRENCY: String(this.s.concurrency),
          WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: String(this.s.perSubscription),
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
        this.crashed = `${name} exited unexpectedly (${JSON.stringify(info)})`;
        process.stderr.write(`${this.crashed}\n`);
      },
    });

    // The tenant: a company with one active subscription to the this.receiver.
    const seeded = await seed(this.stack.gatewayUrl, adminToken);
    await new AdminClient(this.stack.gatewayUrl, adminToken).create(`/companies/${seeded.companyId}/webhooks`, {
      url: this.receiver.url,
      events: ['lead.created'],
    });
    // A real LeadSnapshot: the payload of the seed lead's lead.created event.
    const [row] = await adminQuery<{ payload: Record<string, unknown> }>(
      `select payload from crm.outbox where event_key = 'lead.created' order by id limit 1`,
      this.database,
    );
    if (!row) throw new Error('no lead.created event in crm.outbox after the seed');
    const payloadJson = JSON.stringify(row.payload);
    const envelope = JSON.stringify({ event_id: uuidv7(), event_key: 'lead.created', payload: row.payload });
    say(`  payload: the seed lead's LeadSnapshot, ${payloadJson.length} bytes; delivery body ${envelope.length} bytes`);
    this.producer = new Producer(databaseUrl(this.database), seeded.companyId, payloadJson);
    await this.producer.open(16);
    await this.receiver.reset();
    for (let i = 0; i < 10; i++) await this.producer.commit(0, 50);
    await drain(this.receiver, 500, 30_000);

    say();
    let saturatedRate = 0;
    let ofLoop = Number.NaN;
    if (!this.s.latencyOnly) {
      say('(a) throughput, receiver answering 200 at once');
      // crm's relay looks every 5 ms here (the producer cannot wake it as crm's own commits would); idle in a real
      // service, it would take no CPU from the ceiling: crm is paused while the POST loop runs.
      const crmPid = this.stack.pids.crm;
      if (crmPid) process.kill(crmPid, 'SIGSTOP');
      const loop = await this.phase('post-loop', () =>
        postLoop(this.receiver!.url, envelope, this.s.durationS, 2, this.s.concurrency).finally(
          () => crmPid && process.kill(crmPid, 'SIGCONT'),
        ),
      );
      say(
        `  ceiling: POST loop, one process, ${this.s.concurrency} concurrent over ${SENDER_CONNECTIONS} keep-alive connections: ${f0(loop.value.rate)} req/s` +
          (loop.value.errors ? `  (${loop.value.errors} errors)` : ''),
      );
      this.cpuLine(loop, loop.value.requests);
      const sat = await this.phase('saturation', () => saturate(this.receiver!, this.producer!, this.s));
      say(
        `  pipeline: outbox -> receiver, backlog <= ${this.s.backlog}: ${f0(sat.value.rate)} deliveries/s   per second: ${sat.value.perSecond.join(' ')}`,
      );
      this.cpuLine(sat, sat.value.delivered);
      const missingA = await drain(this.receiver, sat.value.produced, 60_000);
      const counts = await this.receiver.count();
      say(
        `  after the producer stopped: ${missingA} of ${sat.value.produced} events not received within 60 s; ${counts.count - counts.unique} duplicate receipts`,
      );
      ofLoop = ratio(sat.value.rate, loop.value.rate);
      say(
        `  ratio pipeline / POST loop: ${f2(ofLoop)}   target ${targetText('webhooks_vs_post_loop')}: ${verdict(meets('webhooks_vs_post_loop', ofLoop))}`,
      );
      say(`  deliveries/s: ${f0(sat.value.rate)}   target >= ${TARGET_RATE}: ${verdict(sat.value.rate >= TARGET_RATE)}`);
      saturatedRate = sat.value.rate;
    }

    say();
    const rate = this.s.rate > 0 ? this.s.rate : Math.max(1, Math.round(saturatedRate / 2));
    say(
      `(b) latency, commit -> receiver, at ${rate} events/s (${this.s.rate > 0 ? 'BENCH_WH_RATE' : 'half of (a)'}) for ${this.s.latencyDurationS} s, one event per transaction`,
    );
    if (this.s.writeBackBeforeLatency) {
      const { mb, seconds } = writeBack();
      say(`  before it: ${f0(mb)} MB of dirty page cache written back (sync, ${f1(seconds)} s)`);
    }
    // Without (a) before it, the processes' code is still cold: BENCH_WH_WARMUP seconds at the rate first, not measured.
    if (this.s.latencyOnly) await atRate(this.receiver, this.producer, rate, this.s.warmupS);
    const dirty = new DirtyWatch();
    const lat = await this.phase('latency', () => atRate(this.receiver!, this.producer!, rate, this.s.latencyDurationS));
    const { maxMb, burstMb } = dirty.stop();
    const l = await latencies(this.receiver, lat.value, this.database);
    say(
      `  offered ${f0(l.offered)} events/s, ${l.count} measured${l.missing ? `, ${l.missing} MISSING` : ''}${l.lagged ? `, ${l.lagged} commits queued behind others on the producer` : ''}`,
    );
    say(
      `  p50 ${f1(l.p50)} ms   p90 ${f1(l.p90)} ms   p99 ${f1(l.p99)} ms   max ${f1(l.max)} ms   target p99 ${targetText('webhooks_p99_ms_at_1000')} ms at 1000/s: ${verdict(rate === 1000 && meets('webhooks_p99_ms_at_1000', l.p99))}`,
    );
    say(`  stages (ms, wall clock, Postgres timestamps have ms precision here): ${l.stages.join('; ')}`);
    say(
      `  relay: ${f1(l.relayBatch)} events per transaction; dirty page cache up to ${f0(maxMb)} MB, largest write-back burst ${f0(burstMb)} MB in 1 s`,
    );
    this.cpuLine(lat, l.count);
    if (this.s.curve.length) {
      say();
      say(`(b) again at other rates, ${this.s.latencyDurationS} s each, one event per transaction`);
      for (const r of this.s.curve) {
        const run = await this.phase(`latency at ${r}/s`, () => atRate(this.receiver!, this.producer!, r, this.s.latencyDurationS));
        const c = await latencies(this.receiver, run.value, this.database);
        const { ours: busy, outside: other } = coresSplit(run);
        if (other > 0.3) this.disturbed.push(`latency at ${r}/s`);
        say(
          `  ${String(r).padStart(5)}/s asked, ${f0(c.offered)} offered: p50 ${f1(c.p50)}  p90 ${f1(c.p90)}  p99 ${f1(c.p99)}  max ${f1(c.max)} ms` +
            `${c.missing ? `  ${c.missing} MISSING` : ''}; cores busy ${f2(busy)} (${f2(other)} outside the bench)` +
            `; cpu per delivery ${f0((busy * run.seconds * 1e6) / Math.max(1, c.count))} µs; relay ${f1(c.relayBatch)} events per transaction` +
            `${other > 0.3 ? '   DISTURBED' : ''}`,
        );
      }
    }
    if (this.disturbed.length)
      say(`\nDISTURBED phases (other load on the machine; figures not representative): ${this.disturbed.join(', ')}`);
    return {
      figures: {
        webhooks_vs_post_loop: { value: ofLoop, phases: ['post-loop', 'saturation'] },
        // The issue's latency target is at 1,000 events/s: at any other rate the figure is not that one.
        webhooks_p99_ms_at_1000: { value: rate === 1000 ? l.p99 : Number.NaN, phases: ['latency'] },
      },
      disturbed: [...this.disturbed],
    };
  }

  async cleanup(): Promise<void> {
    const notes: string[] = [];
    await this.producer?.close();
    await this.pgCpu?.close();
    await this.stack?.stop().catch((e: Error) => notes.push(`stack: ${e.message}`));
    await this.receiver?.stop().catch((e: Error) => notes.push(`receiver: ${e.message}`));
    notes.push(...(await releaseResources(this.resources)));
    if (this.s.profile) {
      try {
        const all = () => true;
        for (const l of phaseProfiles(
          this.profDir,
          this.phases.filter((p) => p.name !== 'post-loop'),
          { webhooks: all, crm: all },
          12,
        ))
          say(l);
      } catch (e) {
        say(`profiles: ${(e as Error).message}`);
      }
    }
    say();
    say(`cleanup: stopped the stack and the receiver; ${notes.join('; ')}`);
  }
}
