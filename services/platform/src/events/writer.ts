import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { Queryable } from '../db/native.js';
import type { EventKey } from './catalog.js';
import { eventsRecorded } from './outbox.js';
import { insertEvents, planOpenIn, recordEvents } from './outbox.store.js';
import type { EventToRecord } from './payloads.js';
import type { PlanGate } from './plan.js';

/** One event's insert as SQL expressions: its id, company, payload (`from` names the CTE its row comes from). */
export interface OneEventSql {
  id: string;
  company: string;
  key: EventKey;
  payload: string;
  from: string;
  /** The `traceparent` of the request (decision 0200): an SQL expression, null when absent. */
  traceparent?: string;
}

/**
 * `OutboxWriter.insertSql` for statement texts built before a service runs (crm's statements, which tests and
 * benches also build): the insert of one event under an SQL plan gate.
 */
export function outboxInsertSql(gate: PlanGate, e: OneEventSql): string {
  if (gate.kind !== 'sql')
    throw new Error('an event inserted by a state change statement needs a plan gate in SQL (the service that stores plans)');
  return `insert into outbox (id, company_id, event_key, payload, occurred_at, traceparent)
    select ${e.id}, ${e.company}, '${e.key}', ${e.payload}, now(), ${e.traceparent ?? 'null'} from ${e.from} where ${gate.open(e.company, 'now()')}`;
}

export type { Queryable };

/**
 * The one way a service writes events (decision 0090): into its own outbox, in the transaction of the state
 * change, only for companies whose plan is valid (its PlanGate), and waking this process's relay once the
 * transaction commits (decision 0033). Every service has one, `ctx.outbox`:
 * - `record(em, events)` on a MikroORM transaction (admin CRUD; the events are flushed with the unit of work);
 * - `write(db, events)` on the `pg` client of `inTransaction` (hot paths on named statements), one statement;
 * - `insertSql(...)` when the state change and its event are one statement (crm's creations); then `wake(db)`.
 */
export class OutboxWriter {
  private resolved: { gate: PlanGate; write: { name: string; text: string } } | undefined;

  /** `gate` may be a function, asked on first use: a service's gate is known once its components are built. */
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
    const where = gate.kind === 'sql' ? `where ${gate.open('e.company_id', '$2::timestamptz')}` : '';
    const writeText = `insert into outbox (id, company_id, event_key, payload, occurred_at, traceparent)
      select e.id, e.company_id, e.event_key, e.payload, $2::timestamptz, $3::varchar
      from jsonb_to_recordset($1::jsonb) as e(id uuid, company_id uuid, event_key text, payload jsonb) ${where}
      returning id`;
    this.resolved = { gate, write: { name: `outbox_write_${gate.kind}`, text: writeText } };
    return this.resolved;
  }

  /** Adds events to the outbox of an EntityManager's transaction; returns the ids of those written. */
  async record(em: EntityManager, events: readonly EventToRecord[]): Promise<string[]> {
    if (!events.length) return [];
    const open = await openCompanies(
      this.gate,
      events.map((e) => e.companyId),
      new Date(),
      em,
    );
    return recordEvents(
      em,
      this.schema,
      events.filter((e) => open.has(e.companyId)),
    );
  }

  /**
   * Inserts events with one named statement on `db` (the client of `inTransaction`, or the pool for an event alone);
   * returns the ids of those written. Under an SQL gate the plan is checked by that statement.
   */
  async write(db: Queryable, events: readonly EventToRecord[]): Promise<string[]> {
    if (!events.length) return [];
    const { gate, write } = this.plan();
    const at = new Date();
    let issued = events;
    if (gate.kind === 'ask') {
      const open = await openCompanies(
        gate,
        events.map((e) => e.companyId),
        at,
      );
      issued = events.filter((e) => open.has(e.companyId));
      if (!issued.length) return [];
    }
    const rows = issued.map((e) => ({ id: uuidv7(), company_id: e.companyId, event_key: e.eventKey, payload: e.payload }));
    const written = await insertEvents(db, write, rows, at);
    if (written.length) this.wake(db);
    return written;
  }

  /**
   * The SQL of an insert of one event, for a statement that also writes the state change (a CTE `o as (...)`), so
   * the record and its event take one round trip. The arguments are SQL expressions; `from` names the CTE the row
   * comes from. Only under an SQL gate (the plan is checked in that statement); run `wake(db)` after it.
   */
  insertSql(e: OneEventSql): string {
    return outboxInsertSql(this.plan().gate, e);
  }

  /** Events were written on `db` by a statement of `insertSql`: the relay publishes them once `db` commits. */
  wake(db: Queryable): void {
    eventsRecorded(db, this.schema);
  }
}

/** Which of `companyIds` have their events issued at `at` (one question per company). */
export async function openCompanies(gate: PlanGate, companyIds: Iterable<string>, at: Date, em?: EntityManager): Promise<Set<string>> {
  const open = new Set<string>();
  for (const companyId of new Set(companyIds)) {
    if (gate.kind === 'none') open.add(companyId);
    else if (gate.kind === 'ask') {
      if (await gate.open(companyId, at)) open.add(companyId);
    } else {
      if (!em) throw new Error('an SQL plan gate is evaluated in the statement that writes the events');
      if (await planOpenIn(em, gate.open, companyId, at)) open.add(companyId);
    }
  }
  return open;
}
