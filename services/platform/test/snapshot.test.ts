import { expect } from 'chai';
import pg from 'pg';
import { inSnapshot } from '../src/db/native.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

describe('inSnapshot: reads that must agree see one snapshot (real Postgres, decision 0259)', () => {
  let db: TestDatabase;
  let pool: pg.Pool;

  before(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 3 });
    await pool.query('create table snap (id int primary key)');
  });
  after(async () => {
    await pool?.end();
    await db?.drop();
  });
  beforeEach(() => pool.query('truncate snap'));

  it('a row committed by another connection between two reads is seen by neither', async () => {
    const seen = await inSnapshot(pool, async (client) => {
      const page = (await client.query<{ id: number }>('select id from snap')).rows;
      await pool.query('insert into snap values (1)');
      const total = (await client.query<{ n: number }>('select count(*)::int as n from snap')).rows[0]!.n;
      return { page, total };
    });
    expect(seen).to.deep.equal({ page: [], total: 0 });
    // Outside the snapshot the row is there.
    expect((await pool.query('select count(*)::int as n from snap')).rows[0].n).to.equal(1);
  });

  it('refuses writes, and the failed snapshot gives its connection back', async () => {
    const err = await inSnapshot(pool, (client) => client.query('insert into snap values (2)')).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/read-only transaction/);
    expect((await pool.query('select count(*)::int as n from snap')).rows[0].n).to.equal(0);
    for (let i = 0; i < 5; i++)
      expect(await inSnapshot(pool, async (c) => (await c.query('select 1 as one')).rows)).to.deep.equal([{ one: 1 }]);
    expect(pool.totalCount - pool.idleCount).to.equal(0);
  });
});
