/**
 * What every bench run of the lead path shares (`npm run bench`, `npm run bench:leads`): its own database, NATS
 * stream and Redis prefix; the stack launched as processes; named phases with the CPU of every process over each
 * (and the `DISTURBED` mark when the rest of the machine used more than 0.15 cores); the printed preamble
 * (machine, commit, load before the start); pgbench specs; crm's statement texts; and the clean-up that checks
 * every process it started has exited.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dbDefinition, LeadStore } from '@svc/crm';
import { createOrm } from '@svc/platform/db/orm';
import { IDENTITY_HEADER, IdentitySigner } from '@svc/platform/identity';
import { launchStack, type ProcessName, REPO_ROOT, type Stack, type StackOptions } from '../../scripts/stack.js';
import { type CpuSnapshot, coresBusy, formatCores, snapshot } from './cpu.js';
import { monotonicUs } from './cpuprofile.js';
import { adminQuery, benchStackOptions, createDatabase, databaseUrl, releaseResources, withCleanup } from './infra.js';
import type { LoadResult } from './load.js';
import { type Activity, ActivitySampler } from './pgactivity.js';
import type { PgbenchSpec } from './pgbench.js';
import type { Seeded } from './seed.js';
import type { Figures } from './stats.js';

/** A numeric knob from the environment. */
export const num = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};

export const say = (s = '') => process.stdout.write(`${s}\n`);
export const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toString() : 'n/a');
export const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
export const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
export const f3 = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : 'n/a');
export const ratio = (a: number, b: number) => (b > 0 ? a / b : Number.NaN);
export const verdict = (ok: boolean) => (ok ? 'PASS' : 'BELOW');

/** Other processes above this many cores during a phase mark it DISTURBED. */
export const DISTURBANCE_CORES = 0.15;

export interface Phase {
  name: string;
  fromUs: number;
  toUs: number;
  cores: Record<string, number>;
}

/** Per-second responses, and the last two seconds over the first two (a run that slows down shows below 1). */
export function trend(r: LoadResult): string {
  const s = r.perSecond;
  if (s.length < 4) return s.join(' ');
  const head = (s[0]! + s[1]!) / 2;
  const tail = (s[s.length - 1]! + s[s.length - 2]!) / 2;
  return `${s.join(' ')} (last 2 s / first 2 s = ${ratio(tail, head).toFixed(2)})`;
}

/** The commit measured, and whether the work tree differs from it (services/, gateway/, scripts/, proto/). */
export function gitDescribe(): string {
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

/** One bench run: its resources, its processes and its phases. */
export class BenchRun {
  readonly runId = `${Date.now()}`;
  readonly database: string;
  readonly natsStream: string;
  readonly redisPrefix: string;
  readonly outDir: string;
  readonly identitySecret = randomBytes(32).toString('hex');
  readonly adminToken = randomBytes(24).toString('hex');
  readonly phases: Phase[] = [];
  /** The names of the phases during which the rest of the machine used more than DISTURBANCE_CORES. */
  readonly disturbed: string[] = [];
  /** Every process the run started (checked at clean-up), and those whose CPU the phases account for. */
  private readonly startedPids = new Map<string, number>();
  private readonly livePids = new Map<string, number>();
  private readonly subjectPrefix: string;
  private stackHandle: Stack | undefined;
  /** Whether this run made its database (and so drops it). */
  databaseCreated = false;
  private crashed: string | undefined;

  /** `name`: `bench` or `bench-leads`; it names the database, stream, Redis prefix and the artefacts' folder. */
  constructor(readonly name: string) {
    const id = name.replace(/\W/g, '_');
    this.database = `svc_${id}_${this.runId}`;
    this.natsStream = `${id.toUpperCase()}_${this.runId}`;
    this.subjectPrefix = `${id.replace(/_/g, '')}${this.runId}`;
    this.redisPrefix = `${this.subjectPrefix}:`;
    this.outDir = path.join(REPO_ROOT, '.data', name, this.runId);
    mkdirSync(this.outDir, { recursive: true });
  }

  get stack(): Stack {
    if (!this.stackHandle) throw new Error('the stack is not running');
    return this.stackHandle;
  }

  /** A process whose CPU the phases account for, and whose exit the clean-up checks. */
  track(label: string, pid: number): void {
    this.startedPids.set(label, pid);
    this.livePids.set(label, pid);
  }

  /** It stopped: no longer in the phases' accounts (the clean-up still checks it). */
  untrack(label: string): void {
    this.livePids.delete(label);
  }

  /** Prints what was measured where: machine, versions, command and knobs, commit, settings, load before the start. */
  async preamble(title: string, settings: string): Promise<void> {
    const cpus = os.cpus();
    const [pgVersion] = await adminQuery<{ server_version: string }>('show server_version');
    const script = process.env.npm_lifecycle_event;
    const command = script?.startsWith('bench')
      ? `npm run ${script}   (${process.env.npm_lifecycle_script ?? ''})`
      : process.argv.map((a) => path.relative(REPO_ROOT, a) || a).join(' ');
    const knobs = Object.entries(process.env)
      .filter(([k]) => k.startsWith('BENCH_'))
      .map(([k, v]) => `${k}=${v}`);
    say(`# ${title}`);
    say(
      `machine: ${cpus.length} cpus (${cpus[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()}`,
    );
    say(`node ${process.version}; Postgres ${pgVersion?.server_version}; load generator: autocannon 9 in this process (1 thread)`);
    say(`command: ${command}${knobs.length ? `   with ${knobs.join(' ')}` : ''}`);
    say(`code: ${gitDescribe()}`);
    say(
      `run: database ${this.database}, NATS stream ${this.natsStream}, Redis prefix ${this.redisPrefix}; logs and artefacts in ${path.relative(REPO_ROOT, this.outDir)}`,
    );
    say(`settings: ${settings}`);
    const idle0 = snapshot({ pids: {}, comms: [] });
    await new Promise((r) => setTimeout(r, 2000));
    const busyBefore = coresBusy(idle0, snapshot({ pids: {}, comms: [] }))['other processes'] ?? 0;
    say(
      `machine load before the start: ${busyBefore.toFixed(2)} cores busy (2 s sample)${busyBefore > DISTURBANCE_CORES ? '  NOT IDLE: figures will be disturbed' : ''}`,
    );
    say('cpu cores = CPU time of each process / wall time of the phase (warm-up included); "other processes" = the rest of the machine');
    say();
  }

  /** Creates the run's database and starts the whole system as processes on free ports (scripts/stack.ts). */
  async launch(processEnv?: StackOptions['processEnv']): Promise<Stack> {
    await createDatabase(this.database);
    this.databaseCreated = true;
    const t0 = performance.now();
    this.stackHandle = await launchStack({
      ...benchStackOptions({
        database: this.database,
        natsStream: this.natsStream,
        subjectPrefix: this.subjectPrefix,
        redisPrefix: this.redisPrefix,
        outDir: this.outDir,
        adminToken: this.adminToken,
        identitySecret: this.identitySecret,
      }),
      processEnv,
      onUnexpectedExit: (name: ProcessName, info, logFile) => {
        this.crashed = `${name} exited unexpectedly (${JSON.stringify(info)}); see ${logFile}`;
        process.stderr.write(`${this.crashed}\n`);
      },
    });
    for (const [name, pid] of Object.entries(this.stackHandle.pids)) this.track(name, pid);
    say(
      `stack up in ${((performance.now() - t0) / 1000).toFixed(1)} s: gateway ${this.stack.gatewayUrl}, crm ${this.stack.serviceUrls.crm}`,
    );
    return this.stackHandle;
  }

  /** Stops the stack (before pgbench runs, so that crm's outbox relay does not publish pgbench's rows). */
  async stopStack(): Promise<void> {
    const s = this.stackHandle;
    this.stackHandle = undefined;
    if (!s) return;
    for (const name of Object.keys(s.pids)) this.untrack(name);
    await s.stop();
  }

  /** The headers of a request sent to crm directly, as the gateway would sign them for the seeded key. */
  async directHeaders(s: Seeded): Promise<Record<string, string>> {
    const token = await new IdentitySigner(this.identitySecret, 3600).sign({
      kind: 'integration',
      companyId: s.companyId,
      userId: s.userId,
      keyId: s.keyId,
      permissions: ['*'],
    });
    return { [IDENTITY_HEADER]: token };
  }

  /** crm's own lead statement texts (built from the entity definitions, as crm builds them), for the pgbench ceilings. */
  async leadSql(): Promise<LeadStore> {
    const orm = await createOrm({
      url: databaseUrl(this.database),
      schema: 'crm',
      entities: dbDefinition.entities,
      migrations: [],
      poolMax: 1,
    });
    try {
      return new LeadStore(orm);
    } finally {
      await orm.close(true);
    }
  }

  pgbenchSpec(name: string, script: string, clients: number, durationS: number, warmupS: number, threads = 1): PgbenchSpec {
    const pgUrl = new URL(databaseUrl(this.database));
    return {
      name,
      database: this.database,
      host: pgUrl.hostname,
      port: Number(pgUrl.port || 5432),
      user: decodeURIComponent(pgUrl.username || 'postgres'),
      clients,
      threads: Math.min(threads, clients),
      durationS,
      warmupS,
      script,
      workDir: path.join(this.outDir, 'pgbench'),
    };
  }

  /** pgbench's processes are the run's too. */
  readonly onPgbench = (pid: number) => this.startedPids.set(`pgbench ${pid}`, pid);

  private cpuTargets() {
    return { pids: Object.fromEntries(this.livePids), comms: ['postgres', 'redis-server', 'nats-server', 'pgbench'] };
  }

  /** Runs `work` as a named phase: its monotonic window (for profiles) and the CPU of every process in it. */
  readonly phase = async <T>(name: string, work: () => Promise<T>): Promise<{ value: T; cores: Record<string, number> }> => {
    if (this.crashed) throw new Error(this.crashed);
    const before: CpuSnapshot = snapshot(this.cpuTargets());
    const fromUs = monotonicUs();
    const value = await work();
    const toUs = monotonicUs();
    const cores = coresBusy(before, snapshot(this.cpuTargets()));
    this.phases.push({ name, fromUs, toUs, cores });
    if ((cores['other processes'] ?? 0) > DISTURBANCE_CORES) this.disturbed.push(name);
    if (this.crashed) throw new Error(this.crashed);
    return { value, cores };
  };

  /** The same, with pg_stat_activity sampled during the measured part. */
  readonly sampledPhase = async <T>(
    name: string,
    work: () => Promise<T>,
  ): Promise<{ value: T; cores: Record<string, number>; activity: Activity }> => {
    const sampler = new ActivitySampler(databaseUrl(this.database));
    await sampler.start();
    try {
      const r = await this.phase(name, work);
      return { ...r, activity: await sampler.stop() };
    } catch (err) {
      await sampler.stop().catch(() => undefined);
      throw err;
    }
  };

  readonly header = () => say(`  ${''.padEnd(50)} ${'req/s'.padStart(9)} ${'p50 µs'.padStart(9)} ${'p99 µs'.padStart(9)}`);

  /** One figure: req/s, p50, p99, then the phase's cores, the serving process's CPU per request and the disturbance. */
  readonly line = (
    label: string,
    r: Figures & { unexpected?: number; statuses?: Record<string, number> },
    cores: Record<string, number>,
    cpuOf?: string,
  ): void => {
    const bad = r.unexpected ? `   UNEXPECTED: ${r.unexpected} (statuses ${JSON.stringify(r.statuses ?? {})})` : '';
    say(`  ${label.padEnd(50)} ${f1(r.rate).padStart(9)} ${f0(r.p50us).padStart(9)} ${f0(r.p99us).padStart(9)}${bad}`);
    // CPU per request of the process that serves it: cores busy / requests per second.
    const per =
      cpuOf && cores[cpuOf] !== undefined && r.rate > 0 ? `; ${cpuOf} ${f0((cores[cpuOf]! / r.rate) * 1e6)} µs CPU per request` : '';
    const other = cores['other processes'] ?? 0;
    const disturbed = other > DISTURBANCE_CORES ? `   DISTURBED: other processes used ${other.toFixed(2)} cores` : '';
    say(`  ${''.padEnd(52)}cpu cores: ${formatCores(cores)}${per}${disturbed}`);
  };

  /** The closing line on disturbance, and the phases written to phases.json. */
  summarizeDisturbance(): void {
    say(
      this.disturbed.length
        ? `  WARNING: processes outside the bench used > ${DISTURBANCE_CORES} cores during: ${this.disturbed.join('; ')}. Their figures are disturbed.`
        : `  no phase was disturbed by processes outside the bench (each < ${DISTURBANCE_CORES} cores)`,
    );
    writeFileSync(path.join(this.outDir, 'phases.json'), JSON.stringify(this.phases, null, 2));
  }

  /**
   * Runs `main`, then stops everything the run started (`stops` first: the run's own extra processes), drops the
   * database, deletes the stream and the Redis keys, and checks that every process it started is gone; also on
   * SIGINT and SIGTERM (through runBench). Returns what `main` returned.
   */
  run<T>(main: () => Promise<T>, stops: () => Promise<string[]> = async () => []): Promise<T> {
    return withCleanup(main, async () => {
      const notes = await stops();
      await this.stopStack().catch((e: Error) => notes.push(`stack: ${e.message}`));
      notes.push(...(await releaseResources(this)));
      const alive = [...this.startedPids].filter(([, pid]) => {
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
          : `cleanup: all ${this.startedPids.size} processes started by the bench have exited (${[...this.startedPids].map(([n, p]) => `${n} ${p}`).join(', ')})`,
      );
    });
  }
}
