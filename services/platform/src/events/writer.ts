import { v7 as uuidv7 } from 'uuid';
import type { Queryable } from '../db/native.js';
import type { EventKey } from './catalog.js';
import { eventsRecorded } from './outbox.js';
import { eventValues, insertEvents } from './outbox.store.js';
import type { EventToRecord } from './payloads.js';
import type { PlanGate } from './plan.js';

/** SQL expressions; `from` names the CTE its row comes from. */
export interface OneEventSql {
  id: string;
  company: string;
  key: EventKey;
  payload: string;
  from: string;
  traceparent?: string;
}

/** `OutboxWriter.insertSql` for statement texts built before a service runs. */
export function outboxInsertSql(gate: PlanGate, e: OneEventSql): string {
  if (gate.kind !== 'sql')
    throw new Error('an event inserted by a state change statement needs a plan gate in SQL (the service that stores plans)');
  return `insert into outbox (id, company_id, event_key, payload, occurred_at, traceparent)
    select ${e.id}, ${e.company}, '${e.key}', ${e.payload}, now(), ${e.traceparent ?? 'null'} from ${e.from} where ${gate.open(e.company, 'now()')}`;
}

export type { Queryable };

/**
 * The one way a service writes events (decision 0090): in the state change's transaction, only under a valid plan,
 * waking the relay on commit (decision 0033). `write` on an `inTransaction` client, `insertSql` + `wake` when state and
 * event are one statement.
 */
export class OutboxWriter {
  private resolved: { gate: PlanGate; write: { name: string; text: string } } | undefined;

  /** A function is asked on first use: a service's gate is known once its components are built. */
  constructor(
    readonly schema: string,
    private readonly gateOf: PlanGate | (() => PlanGate),
  ) {}

  get gate(): PlanGate {
    return this.plan().gate;
  }

  private plan() {
    if (this.resolved) return this.resolved;
    const gate = typeof this.gateOf === 'function' ? this.gateOf() : this.gateOf;
    this.resolved = { gate, write: { name: `outbox_write_${gate.kind}`, text: writeText(gate, 1) } };
    return this.resolved;
  }

  /** The rows of the events the gate lets through (an `ask` gate is asked here), as `write` and `part` insert them. */
  private async issue(events: readonly EventToRecord[], at: Date) {
    const { gate } = this.plan();
    let issued = events;
    if (gate.kind === 'ask' && events.length) {
      const open = await openCompanies(
        gate,
        events.map((e) => e.companyId),
        at,
      );
      issued = events.filter((e) => open.has(e.companyId));
    }
    return issued.map((e) => ({ id: uuidv7(), company_id: e.companyId, event_key: e.eventKey, payload: e.payload }));
  }

  /** One named statement; under an SQL gate the statement checks the plan. */
  async write(db: Queryable, events: readonly EventToRecord[]): Promise<string[]> {
    if (!events.length) return [];
    const { write } = this.plan();
    const at = new Date();
    const rows = await this.issue(events, at);
    if (!rows.length) return [];
    const written = await insertEvents(db, write, rows, at);
    if (written.length) this.wake(db);
    return written;
  }

  /**
   * The events as a CTE of the state change's own statement, under any gate (decision 0236): `text` reads the
   * parameters from `$first` on, `values` are theirs; `issued`: the events the statement may insert (an `sql` gate
   * still checks each), none when an `ask` gate closed them all. Run `wake(db)` after a statement that issued any.
   */
  async part(events: readonly EventToRecord[], first: number): Promise<{ text: string; values: unknown[]; issued: number }> {
    const at = new Date();
    const rows = await this.issue(events, at);
    return { text: writeText(this.plan().gate, first), values: eventValues(rows, at), issued: rows.length };
  }

  /** Only under an SQL gate, which the statement checks; run `wake(db)` after it. */
  insertSql(e: OneEventSql): string {
    return outboxInsertSql(this.plan().gate, e);
  }

  wake(db: Queryable): void {
    eventsRecorded(db, this.schema);
  }
}

/** The insert of a JSON array of events, their time and traceparent, read from `$first`, `$first + 1`, `$first + 2`. */
function writeText(gate: PlanGate, first: number): string {
  const [events, at, trace] = [first, first + 1, first + 2].map((n) => `$${n}`);
  const where = gate.kind === 'sql' ? `where ${gate.open('e.company_id', `${at}::timestamptz`)}` : '';
  return `insert into outbox (id, company_id, event_key, payload, occurred_at, traceparent)
      select e.id, e.company_id, e.event_key, e.payload, ${at}::timestamptz, ${trace}::varchar
      from jsonb_to_recordset(${events}::jsonb) as e(id uuid, company_id uuid, event_key text, payload jsonb) ${where}
      returning id`;
}

/** Once per company: an `ask` gate is a call to crm. */
async function openCompanies(gate: Extract<PlanGate, { kind: 'ask' }>, companyIds: Iterable<string>, at: Date): Promise<Set<string>> {
  const open = new Set<string>();
  for (const companyId of new Set(companyIds)) if (await gate.open(companyId, at)) open.add(companyId);
  return open;
}
