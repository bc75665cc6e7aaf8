import { MikroORM } from '@mikro-orm/postgresql';
import type { DefinedColumn } from '@svc/platform/db/native';
import { expect } from 'chai';
import { ATTEMPT_COLUMNS, DELIVERY_COLUMNS, deliveryOfRow } from '../src/deliveries/delivery.columns.js';
import { Delivery, DeliveryAttempt } from '../src/deliveries/delivery.entity.js';
import { Subscription } from '../src/subscriptions/subscription.entity.js';
import { SUBSCRIPTION_COLUMNS } from '../src/subscriptions/subscription.store.js';

/**
 * The consumer's and dispatcher's statements take their column lists and bound types from the entities' definitions
 * (`definedColumns`: the texts are built at module load, before any ORM exists). These checks keep them equal to
 * what the ORM discovers from the same entities (its naming, its column types).
 */
describe('delivery statements against the entities', () => {
  const entities = [
    ['Delivery', DELIVERY_COLUMNS],
    ['DeliveryAttempt', ATTEMPT_COLUMNS],
    ['Subscription', SUBSCRIPTION_COLUMNS],
  ] as const;
  const discovered = new Map<string, { column: string; type: string }[]>();
  before(async () => {
    // Metadata discovery only: MikroORM 7 connects lazily, and nothing here queries (the URL leads nowhere).
    const orm = await MikroORM.init({
      entities: [Delivery, DeliveryAttempt, Subscription],
      clientUrl: 'postgres://metadata@127.0.0.1:1/none',
    });
    const scalars = (meta: { props: readonly { kind: string; persist?: boolean; fieldNames: string[]; columnTypes: string[] }[] }) =>
      meta.props
        .filter((p) => p.kind === 'scalar' && p.persist !== false)
        .map((p) => ({ column: p.fieldNames[0] as string, type: p.columnTypes[0] as string }));
    discovered.set('Delivery', scalars(orm.getMetadata().get(Delivery)));
    discovered.set('DeliveryAttempt', scalars(orm.getMetadata().get(DeliveryAttempt)));
    discovered.set('Subscription', scalars(orm.getMetadata().get(Subscription)));
    await orm.close();
  });

  // What a column type is bound as: varchar(n) and text take text, int and integer are int4, json is jsonb.
  const bound = (t: string) =>
    t
      .replace(/^varchar\(\d+\)/, 'text')
      .replace(/^(int|integer)\b/, 'int4')
      .replace(/^boolean/, 'bool')
      .replace(/^json$/, 'jsonb')
      .replace(/^timestamptz\(\d+\)/, 'timestamptz');

  for (const [name, defined] of entities) {
    it(`${name}: lists every column of the entity, and no other, each bound as a type of the column`, () => {
      const columns = discovered.get(name) ?? [];
      expect(defined.map((c: DefinedColumn) => c.column).sort()).to.deep.equal(columns.map((c) => c.column).sort());
      const wrong = columns
        .filter((c) => defined.find((d: DefinedColumn) => d.column === c.column)?.pgType !== bound(c.type))
        .map((c) => `${c.column}: ${c.type}`);
      expect(wrong).to.deep.equal([]);
    });
  }

  it('reads a claimed row into a Delivery: dates as Dates, counts as numbers, config parsed', () => {
    const d = deliveryOfRow({
      id: 'a',
      company_id: 'b',
      subscription_id: 'c',
      event_id: 'e',
      event_key: 'lead.created',
      url: 'http://127.0.0.1/x',
      config: '{"secret":"s","headers":{},"auth":null}',
      body: '{}',
      status: 'pending',
      attempt_count: '2',
      max_retries: 5,
      next_attempt_at: '2026-11-25T14:00:00.000Z',
      lease_until: null,
      lease_owner: null,
      created_at: new Date('2026-11-25T13:00:00.000Z'),
      updated_at: '2026-11-25T13:30:00.000Z',
      completed_at: null,
      traceparent: null,
    });
    expect(d).to.deep.equal({
      id: 'a',
      companyId: 'b',
      subscriptionId: 'c',
      eventId: 'e',
      eventKey: 'lead.created',
      url: 'http://127.0.0.1/x',
      config: { secret: 's', headers: {}, auth: null },
      body: '{}',
      status: 'pending',
      attemptCount: 2,
      maxRetries: 5,
      nextAttemptAt: new Date('2026-11-25T14:00:00.000Z'),
      leaseUntil: null,
      leaseOwner: null,
      createdAt: new Date('2026-11-25T13:00:00.000Z'),
      updatedAt: new Date('2026-11-25T13:30:00.000Z'),
      completedAt: null,
      traceparent: null,
    });
  });
});
