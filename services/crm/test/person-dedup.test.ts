import { inTransaction, nativePool } from '@svc/platform/db/native';
import { createOrm, migrate, type Orm } from '@svc/platform/db/orm';
import { createTestDatabase, type TestDatabase } from '@svc/platform/testing';
import { expect } from 'chai';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { CONTACT_TYPES } from '../src/contacts/contact.entity.js';
import { ContactStore, type PersonRequest } from '../src/contacts/contact.store.js';
import { dbDefinition } from '../src/db.js';

/**
 * Person deduplication (spec rule 4) under concurrency: creations that share a contact are serialized and make one
 * person; creations with different contacts do not wait for each other; the search is an index look-up.
 */
describe('person deduplication: per-contact locks and the normalized index', () => {
  let db: TestDatabase;
  let orm: Orm;
  let pool: Pool;
  let contacts: ContactStore;
  const company = uuidv7();
  const at = new Date();

  const dedup = (email: string, extra: { type: number; value: string }[] = []): PersonRequest => ({
    name: email,
    contacts: [{ type: CONTACT_TYPES.email, value: email }, ...extra],
    avoid_duplicate: true,
    duplicate_check_types: [CONTACT_TYPES.email, CONTACT_TYPES.phone],
  });
  const persons = async () => (await pool.query('select count(*)::int n from persons where company_id = $1', [company])).rows[0].n;
  /** Holds a transaction open after resolving `input`, until `release` is called. */
  const held = (input: PersonRequest) => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let resolved!: (id: string) => void;
    const person = new Promise<string>((r) => {
      resolved = r;
    });
    const done = inTransaction(pool, async (client) => {
      const p = await contacts.resolvePerson(client, company, input, 'person', at);
      resolved(p.person.id);
      await gate;
      return p.person.id;
    });
    return { person, release, done };
  };
  /** Whether `work` is still waiting after the other transaction had time to let it through. */
  const blocked = async (work: Promise<unknown>) => {
    const waiting = async () =>
      (await pool.query(`select count(*)::int n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`))
        .rows[0].n;
    for (let i = 0; i < 100; i++) {
      if ((await waiting()) > 0) return true;
      const settled = await Promise.race([work.then(() => true), new Promise((r) => setTimeout(r, 20, false))]);
      if (settled) return false;
    }
    return false;
  };

  before(async () => {
    db = await createTestDatabase();
    orm = await createOrm({ url: db.url, schema: 'crm', entities: dbDefinition.entities, migrations: dbDefinition.migrations });
    await migrate(orm, 'crm');
    pool = await nativePool(orm);
    contacts = new ContactStore(orm);
  });
  after(async () => {
    await orm?.close(true);
    await db?.drop();
  });

  it('a creation sharing an e-mail (in another letter case) waits for the first and reuses its person', async () => {
    const first = held(dedup('Ana@Example.test'));
    const firstId = await first.person;
    const second = inTransaction(pool, (client) => contacts.resolvePerson(client, company, dedup('ana@example.TEST'), 'person', at));
    expect(await blocked(second), 'the second waits on the contact lock').to.equal(true);
    first.release();
    await first.done;
    expect((await second).person.id).to.equal(firstId);
    expect(await persons()).to.equal(1);
  });

  it('a creation with other contacts does not wait for an open one', async () => {
    const first = held(dedup('bia@example.test'));
    await first.person;
    const other = inTransaction(pool, (client) => contacts.resolvePerson(client, company, dedup('caio@example.test'), 'person', at));
    expect(await blocked(other), 'no wait on another contact').to.equal(false);
    first.release();
    await Promise.all([first.done, other]);
  });

  it('a contact the found person gains is locked too: a creation sending only that phone waits, then finds the person', async () => {
    await inTransaction(pool, (client) => contacts.resolvePerson(client, company, dedup('davi@example.test'), 'person', at));
    // Davi is found by his e-mail and gains a phone, in a transaction still open.
    const first = held(dedup('davi@example.test', [{ type: CONTACT_TYPES.phone, value: '+55 (11) 9999-0001' }]));
    const davi = await first.person;
    const byPhone: PersonRequest = {
      name: 'someone',
      contacts: [{ type: CONTACT_TYPES.phone, value: '5511 99990001' }],
      avoid_duplicate: true,
      duplicate_check_types: [CONTACT_TYPES.phone],
    };
    const second = inTransaction(pool, (client) => contacts.resolvePerson(client, company, byPhone, 'person', at));
    expect(await blocked(second)).to.equal(true);
    first.release();
    await first.done;
    expect((await second).person.id).to.equal(davi);
  });

  it('twenty concurrent creations with one e-mail make one person', async () => {
    const before = await persons();
    const ids = await Promise.all(
      Array.from({ length: 20 }, () =>
        inTransaction(pool, (client) => contacts.resolvePerson(client, company, dedup('eva@example.test'), 'person', at)),
      ),
    );
    expect(new Set(ids.map((p) => p.person.id)).size).to.equal(1);
    expect(await persons()).to.equal(before + 1);
  });

  it('finds the person through person_contacts_normalized_idx in a company of thousands, with and without statistics', async () => {
    await pool.query(
      `insert into persons (id, company_id, name, created_at) select gen_random_uuid(), $1, 'p' || i, now() from generate_series(1, 3000) i;
       insert into person_contacts (id, company_id, person_id, type, value, "primary")
         select gen_random_uuid(), $1, p.id, 1, p.name || '@bulk.example.test', true from persons p where p.company_id = $1 and p.name like 'p%'`.replace(
        /\$1/g,
        `'${company}'`,
      ),
    );
    const text = (contacts as unknown as { findByContacts: { text: string } }).findByContacts.text;
    const probes = JSON.stringify([{ type: CONTACT_TYPES.email, norm: 'p1234@bulk.example.test' }]);
    const plan = async () => JSON.stringify((await pool.query(`explain (format json) ${text}`, [company, probes])).rows);
    expect(await plan(), 'before ANALYZE').to.contain('person_contacts_normalized_idx');
    await pool.query('analyze person_contacts; analyze persons');
    expect(await plan(), 'after ANALYZE').to.contain('person_contacts_normalized_idx');
    const found = await inTransaction(pool, (client) =>
      contacts.resolvePerson(client, company, { ...dedup('P1234@bulk.example.test'), name: undefined }, 'person', at),
    );
    expect(found.person.name).to.equal('p1234');
  });
});
