/**
 * What the database connections were doing during a phase, sampled from pg_stat_activity and pg_locks
 * every few tens of milliseconds: executing, waiting for a row lock, idle inside a transaction (waiting
 * for the client to send its next statement) or idle. For lead creation it also says in what state the
 * holder of the contended row lock (company_sequences) was while others waited for it.
 */
import pg from 'pg';

const SAMPLE_SQL = `
with a as (
  select pid, state, wait_event_type, wait_event, xact_start
  from pg_stat_activity
  where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()
    and query not ilike 'listen %'
),
waited as (
  select distinct h.pid
  from pg_locks w join pg_locks h on h.locktype = 'transactionid' and h.transactionid = w.transactionid and h.granted
  where not w.granted and w.locktype = 'transactionid' and w.pid in (select pid from a)
)
select
  count(*) filter (where state = 'active' and wait_event_type = 'Lock')::int as lock_wait,
  count(*) filter (where state = 'active' and coalesce(wait_event_type, '') <> 'Lock')::int as executing,
  count(*) filter (where state like 'idle in transaction%')::int as idle_in_tx,
  count(*) filter (where state = 'idle')::int as idle,
  (select count(*) from waited)::int as holders,
  (select count(*) from a where pid in (select pid from waited) and state like 'idle in transaction%')::int as holders_idle_in_tx,
  coalesce((select json_object_agg(k, n) from (
    select coalesce(wait_event_type, 'CPU') || ':' || coalesce(wait_event, '-') as k, count(*) as n
    from a where state = 'active' group by 1) w), '{}') as waits
from a`;

export interface Activity {
  samples: number;
  /** The first error of a failed sample. */
  error?: string;
  /** Mean number of connections in each state. */
  lockWait: number;
  executing: number;
  idleInTx: number;
  idle: number;
  /** Share of samples in which someone waited for a transaction's lock, and in which its holder was idle in transaction. */
  contended: number;
  holderIdleInTx: number;
  /** Mean number of active connections per wait_event_type:wait_event (CPU:- = running). */
  activeBy: [string, number][];
}

interface Sample {
  lock_wait: number;
  executing: number;
  idle_in_tx: number;
  idle: number;
  holders: number;
  holders_idle_in_tx: number;
  waits: Record<string, number>;
}

export class ActivitySampler {
  private client: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private error: string | undefined;
  private rows: Sample[] = [];

  constructor(
    private readonly url: string,
    private readonly intervalMs = 50,
  ) {}

  async start(): Promise<void> {
    this.client = new pg.Client({ connectionString: this.url });
    await this.client.connect();
    this.rows = [];
    this.timer = setInterval(() => {
      if (this.busy || !this.client) return;
      this.busy = true;
      this.client
        .query(SAMPLE_SQL)
        .then((r) => this.rows.push(r.rows[0]))
        .catch((err: Error) => (this.error ??= err.message))
        .finally(() => (this.busy = false));
    }, this.intervalMs);
  }

  async stop(): Promise<Activity> {
    clearInterval(this.timer);
    while (this.busy) await new Promise((r) => setTimeout(r, 5));
    await this.client?.end();
    this.client = undefined;
    const n = this.rows.length || 1;
    type Numeric = Exclude<keyof Sample, 'waits'>;
    const mean = (k: Numeric) => this.rows.reduce((s, r) => s + r[k], 0) / n;
    const by = new Map<string, number>();
    for (const r of this.rows) for (const [k, v] of Object.entries(r.waits)) by.set(k, (by.get(k) ?? 0) + v / n);
    const contendedRows = this.rows.filter((r) => r.holders > 0);
    return {
      samples: this.rows.length,
      error: this.error,
      lockWait: mean('lock_wait'),
      executing: mean('executing'),
      idleInTx: mean('idle_in_tx'),
      idle: mean('idle'),
      contended: contendedRows.length / n,
      holderIdleInTx: contendedRows.length ? contendedRows.filter((r) => r.holders_idle_in_tx > 0).length / contendedRows.length : 0,
      activeBy: [...by].sort((x, y) => y[1] - x[1]),
    };
  }
}

export function formatActivity(a: Activity): string {
  if (!a.samples) return `no samples of pg_stat_activity${a.error ? ` (${a.error})` : ''}`;
  return (
    `db connections (mean of ${a.samples} samples): executing ${a.executing.toFixed(1)}, waiting for a lock ${a.lockWait.toFixed(1)}, ` +
    `idle in transaction ${a.idleInTx.toFixed(1)}, idle ${a.idle.toFixed(1)}; a lock was contended in ${(100 * a.contended).toFixed(0)}% of samples, ` +
    `its holder idle in transaction (waiting for its client) in ${(100 * a.holderIdleInTx).toFixed(0)}% of those; ` +
    `active connections by wait event: ${a.activeBy
      .slice(0, 6)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(', ')}`
  );
}
