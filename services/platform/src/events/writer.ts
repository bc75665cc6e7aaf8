import { v7 as uuidv7 } from 'uuid';
import type { Queryable } from '../db/native.js';
import type { EventKey } from './catalog.js';
import { eventsRecorded } from './outbox.js';
import { insertEvents } from './outbox.store.js';
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
    const where = gate.kind === 'sql' ? `where ${gate.open('e.company_id', '$2::timestamptz')}` : '';
    const writeText = `insert into outbox (id, company_id, event_key, payload, occurred_at, traceparent)
      select e.id, e.company_id, e.event_key, e.payload, $2::timestamptz, $3::varchar
      from jsonb_to_recordset($1::jsonb) as e(id uuid, company_id uuid, event_key text, payload jsonb) ${where}
      returning id`;
    this.resolved = { gate, write: { name: `outbox_write_${gate.kind}`, text: writeText } };
    return this.resolved;
  }

  /** One named statement; under an SQL gate the statement checks the plan. */
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

  /** Only under an SQL gate, which the statement checks; run `wake(db)` after it. */
  insertSql(e: OneEventSql): string {
    return outboxInsertSql(this.plan().gate, e);
  }

  wake(db: Queryable): void {
    eventsRecorded(db, this.schema);
  }
}

/** Once per company: an `ask` gate is a call to crm. */
async function openCompanies(gate: Extract<PlanGate, { kind: 'ask' }>, companyIds: Iterable<string>, at: Date): Promise<Set<string>> {
  const open = new Set<string>();
  for (const companyId of new Set(companyIds)) if (await gate.open(companyId, at)) open.add(companyId);
  return open;
}
