import { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import { inTransaction, nativePool } from '../src/db/native.js';
import { ormConfig } from '../src/db/orm.js';
import { OutboxEvent } from '../src/events/outbox.entity.js';
import { onEventsCommitted } from '../src/events/outbox.js';
import type { EventToRecord } from '../src/events/payloads.js';
import { type PlanGate, planValidSql } from '../src/events/plan.js';
import { OutboxWriter } from '../src/events/writer.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

const SCHEMA = 'writertest';

/** A gate in SQL over a plans table of this test, as crm's is over its companies. */
const sqlGate: PlanGate = {
  kind: 'sql',
  open: (company, at) => `exists (select 1 from plans c where c.id = ${company} and ${planValidSql('c.plan_valid_until', at)})`,
};

describe('the outbox writer: plan gate, one statement, relay woken after the commit (real Postgres)', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  const open = uuidv7();
  const ended = uuidv7();
  const unlimited = uuidv7();
  let wakes = 0;
  let unwatch: () => void;

  const event = (companyId: string, n: number): EventToRecord => ({ companyId, eventKey: 'chat.message_sent', payload: { n } });
  const rows = async () =>
    (
      await orm.em.fork().execute<{ company_id: string; payload: { n: number } }[]>(`select company_id, payload from outbox order by id`)
    ).map((r) => [r.company_id, r.payload.n]);

  before(async () => {
    db = await createTestDatabase();
    orm = await MikroORM.init(ormConfig({ url: db.url, schema: SCHEMA, entities: [OutboxEvent], migrations: [] }));
    await orm.em.fork().execute(`create schema ${SCHEMA}`);
    await orm.schema.create();
    await orm.em.fork().execute(`create table plans (id uuid primary key, plan_valid_until timestamptz)`);
    await orm.em
      .fork()
      .execute(`insert into plans values (?, now() + interval '1 day'), (?, now() - interval '1 second'), (?, null)`, [
        open,
        ended,
        unlimited,
      ]);
    unwatch = onEventsCommitted(SCHEMA, () => void wakes++);
  });
  beforeEach(async () => {
    await orm.em.fork().execute('truncate outbox');
    wakes = 0;
  });
  after(async () => {
    unwatch?.();
    await orm?.close(true);
    await db?.drop();
  });

  it('writes on a transaction client only the events of companies whose plan is valid, and wakes the relay once it commits', async () => {
    const writer = new OutboxWriter(SCHEMA, sqlGate);
    const pool = await nativePool(orm);
    const ids = await inTransaction(pool, async (client) => {
      const written = await writer.write(client, [event(open, 1), event(ended, 2), event(unlimited, 3)]);
      expect(wakes).to.equal(0);
      return written;
    });
    expect(ids).to.have.length(2);
    expect(wakes).to.equal(1);
    expect(await rows()).to.deep.equal([
      [open, 1],
      [unlimited, 3],
    ]);
  });

  it('writes nothing and wakes no relay for a transaction that rolls back', async () => {
    const writer = new OutboxWriter(SCHEMA, sqlGate);
    const pool = await nativePool(orm);
    const failed = await inTransaction(pool, async (client) => {
      await writer.write(client, [event(open, 1)]);
      throw new Error('rollback');
    }).catch((err: Error) => err.message);
    expect(failed).to.equal('rollback');
    expect(await rows()).to.deep.equal([]);
    expect(wakes).to.equal(0);
  });

  it('does not wake the relay when the gate let no event through', async () => {
    const writer = new OutboxWriter(SCHEMA, sqlGate);
    expect(await writer.write(await nativePool(orm), [event(ended, 1)])).to.deep.equal([]);
    expect(wakes).to.equal(0);
  });

  it('asks an `ask` gate once per company and writes only the open ones', async () => {
    const asked: string[] = [];
    const writer = new OutboxWriter(SCHEMA, {
      kind: 'ask',
      open: async (companyId) => {
        asked.push(companyId);
        return companyId !== ended;
      },
    });
    await writer.write(await nativePool(orm), [event(open, 1), event(ended, 2), event(open, 3)]);
    expect(asked).to.deep.equal([open, ended]);
    expect(await rows()).to.deep.equal([
      [open, 1],
      [open, 3],
    ]);
    expect(wakes).to.equal(1);
  });

  it('writes under an `ask` gate in a transaction only the open companies, waking the relay at its commit', async () => {
    const writer = new OutboxWriter(SCHEMA, { kind: 'ask', open: async (companyId) => companyId !== ended });
    const ids = await inTransaction(await nativePool(orm), async (client) => {
      const written = await writer.write(client, [event(ended, 1), event(unlimited, 2)]);
      expect(wakes).to.equal(0);
      return written;
    });
    expect(ids).to.have.length(1);
    expect(await rows()).to.deep.equal([[unlimited, 2]]);
    expect(wakes).to.equal(1);
  });

  it('inserts an event in the statement of its state change (insertSql) only under a valid plan', async () => {
    const writer = new OutboxWriter(SCHEMA, sqlGate);
    const pool = await nativePool(orm);
    const text = `with r as (select $1::uuid as company_id), o as (${writer.insertSql({
      id: '$2::uuid',
      company: 'r.company_id',
      key: 'lead.created',
      payload: `jsonb_build_object('lead', jsonb_build_object('n', $3::int))`,
      from: 'r',
    })}) select 1`;
    await pool.query(text, [open, uuidv7(), 1]);
    await pool.query(text, [ended, uuidv7(), 2]);
    const [row] = await orm.em.fork().execute<{ event_key: string; payload: unknown }[]>('select event_key, payload from outbox');
    expect(await rows()).to.have.length(1);
    expect(row).to.deep.equal({ event_key: 'lead.created', payload: { lead: { n: 1 } } });
  });

  for (const [kind, gate] of [
    ['ask', { kind: 'ask', open: async (companyId: string) => companyId !== ended }],
    ['sql', sqlGate],
  ] as const) {
    it(`inserts events given by value in the statement of their state change (part) under an \`${kind}\` gate, open companies only`, async () => {
      const writer = new OutboxWriter(SCHEMA, gate);
      const pool = await nativePool(orm);
      const one = async (companyId: string, n: number) => {
        const part = await writer.part([event(companyId, n)], 2);
        await pool.query(`with r as (select $1::int as n), e as (${part.text}) select n from r`, [n, ...part.values]);
        return part.issued;
      };
      const issued = [await one(open, 1), await one(ended, 2), await one(unlimited, 3)];
      expect(issued).to.deep.equal(kind === 'ask' ? [1, 0, 1] : [1, 1, 1]);
      expect(await rows()).to.deep.equal([
        [open, 1],
        [unlimited, 3],
      ]);
    });
  }

  it('refuses insertSql without a gate in SQL (the plan would go unchecked)', () => {
    const writer = new OutboxWriter(SCHEMA, { kind: 'ask', open: async () => true });
    expect(() => writer.insertSql({ id: '$1', company: '$2', key: 'lead.created', payload: '$3', from: 'r' })).to.throw(/plan gate in SQL/);
  });

  it('types an event by its key: an unknown key or a payload without its fields does not compile', () => {
    const typed: EventToRecord[] = [
      // @ts-expect-error a misspelt key is not in the catalog
      { companyId: open, eventKey: 'lead.stage_change', payload: {} },
      // @ts-expect-error deal.won carries won_date, won_by and the gain reasons
      { companyId: open, eventKey: 'deal.won', payload: { deal: {} } },
    ];
    expect(typed).to.have.length(2);
  });
});
