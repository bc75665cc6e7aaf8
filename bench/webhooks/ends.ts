/**
 * The two ends of the webhook pipeline the bench drives: the receiver (bench/webhooks/receiver.ts, a child process
 * asked over IPC) and the producer writing events into crm's outbox.
 */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { monotonicUs } from '../lib/cpuprofile.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export class Receiver {
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

/**
 * The producer: events written straight into crm's outbox, each transaction one round trip, leaving what the
 * outbox writer's `write` leaves in a service's transaction: the outbox rows (no notification: a service wakes its
 * own relay in-process after the commit, decision 0033). The producer is not crm's process and cannot do that: crm's
 * relay here looks every 5 ms even when idle (OUTBOX_SWEEP_MS=5), as it polls while events flow anyway; at the rates
 * of (a) and (b) events always flow, and a service's own wake-up would find them no sooner. The rows are written by
 * a PL/pgSQL function of the bench's own (public.bench_emit) from the payload kept in a table, so a commit is one
 * prepared statement: the producer's own cost (it shares the two cores) stays small.
 */
export class Producer {
  private readonly clients: pg.Client[] = [];
  produced = 0;
  constructor(
    private readonly databaseUrl: string,
    private readonly companyId: string,
    private readonly payloadJson: string,
  ) {}
  async open(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const c = new pg.Client({ connectionString: this.databaseUrl, application_name: 'bench-producer' });
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
