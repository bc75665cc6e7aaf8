import { defineEntity, p } from '@mikro-orm/core';
import { expect } from 'chai';
import pg from 'pg';
import { tableOf } from '../src/db/entity-table.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

const Widget = defineEntity({
  name: 'Widget',
  tableName: 'widgets',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    // A keyword as a column name: every column is quoted.
    isMain: p.boolean().fieldName('primary'),
    price: p.decimal('number').precision(10).scale(2).nullable(),
    tags: p.json<string[]>().nullable(),
    createdAt: p.datetime(),
  },
});
const WIDGETS = tableOf(Widget);

const ID = '00000000-0000-4000-8000-000000000001';
const COMPANY = '00000000-0000-4000-8000-000000000002';

describe('EntityTable: statement texts from an entity definition', () => {
  it('selects every property under its own name, quoting columns and reading decimals as numbers', () => {
    expect(WIDGETS.name).to.equal('widgets');
    expect(WIDGETS.column('isMain')).to.equal('"primary"');
    expect(WIDGETS.select('w', ['id', 'isMain', 'price'])).to.equal(
      'w."id" as "id", w."primary" as "isMain", w."price"::float8 as "price"',
    );
  });

  it('builds json or, when asked, jsonb objects of the same fields', () => {
    expect(WIDGETS.json('w', ['id', 'companyId'])).to.equal(`json_build_object('id', w."id", 'companyId', w."company_id")`);
    expect(WIDGETS.json('w', ['id'], { jsonb: true })).to.equal(`jsonb_build_object('id', w."id")`);
  });

  it('inserts every column or the named ones, bound as their types, and updates the rest by keys', () => {
    expect(WIDGETS.insert('returning 1')).to.equal(
      'insert into widgets ("id", "company_id", "primary", "price", "tags", "created_at") values ($1::uuid, $2::uuid, $3::bool, $4::numeric, $5::jsonb, $6::timestamptz) returning 1',
    );
    expect(WIDGETS.columnList(['companyId', 'isMain'])).to.equal('"company_id", "primary"');
    expect(WIDGETS.insertSome(['companyId', 'id'])).to.equal('insert into widgets ("company_id", "id") values ($1::uuid, $2::uuid)');
    expect(WIDGETS.update(['companyId', 'id'])).to.equal(
      'update widgets set "primary" = $3::bool, "price" = $4::numeric, "tags" = $5::jsonb, "created_at" = $6::timestamptz where "company_id" = $2::uuid and "id" = $1::uuid',
    );
  });

  it('names an unknown property in its error', () => {
    expect(() => WIDGETS.select('w', ['nope' as 'id'])).to.throw('widgets has no column for nope');
  });

  describe('against Postgres', () => {
    let db: TestDatabase;
    let client: pg.Client;

    before(async () => {
      db = await createTestDatabase();
      client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.query(`create temporary table widgets (id uuid primary key, company_id uuid not null, "primary" bool not null,
        price numeric(10, 2), tags jsonb, created_at timestamptz not null)`);
    });
    after(async () => {
      await client?.end();
      await db?.drop();
    });

    it('writes a row with values() and reads it back as the entity, timestamps hydrated to Dates', async () => {
      const createdAt = new Date('2026-01-02T03:04:05.678Z');
      const widget = { id: ID, companyId: COMPANY, isMain: true, price: 12.5, tags: ['a', 'b'], createdAt };
      await client.query(WIDGETS.insert(), WIDGETS.values(widget));
      const { rows } = await client.query(`select ${WIDGETS.json('w')} as j from widgets w where w.id = $1`, [ID]);
      expect(WIDGETS.hydrate(rows[0].j)).to.deep.equal(widget);
      const changed = { ...widget, isMain: false, price: null, tags: null };
      await client.query(WIDGETS.update(['companyId', 'id']), WIDGETS.values(changed));
      const read = await client.query(`select ${WIDGETS.select('w')} from widgets w`);
      expect(read.rows).to.deep.equal([changed]);
    });
  });
});
