import { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import pg from 'pg';
import { ormConfig } from '../src/db/orm.js';
import { OutboxEvent } from '../src/events/outbox.entity.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

const SCHEMA = 'pooltest';

/** Fails instead of hanging when the pool has no client left to give. */
const within = <T>(ms: number, p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))]);

describe('database pool: a connection lost mid-transaction is not leaked (real Postgres)', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let admin: pg.Client;

  before(async () => {
    db = await createTestDatabase();
    // Two clients: two leaked transactions would leave nothing for the next query.
    orm = await MikroORM.init(ormConfig({ url: db.url, schema: SCHEMA, entities: [OutboxEvent], migrations: [], poolMax: 2 }));
    await orm.em.fork().execute(`create schema ${SCHEMA}`);
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
    await orm?.close(true);
    await db?.drop();
  });

  it('a transaction whose connection is terminated fails, and the pool goes on serving', async () => {
    for (let i = 0; i < 3; i++) {
      const failed = await orm.em
        .fork()
        .transactional(async (tx) => {
          await tx.execute('select 1');
          await tx.execute('select pg_terminate_backend(pg_backend_pid())');
        })
        .then(
          () => undefined,
          (err: Error) => err,
        );
      expect(failed?.message).to.match(/terminat|connection/i);
    }
    expect(await within(5000, orm.em.fork().execute('select 1 as one'))).to.deep.equal([{ one: 1 }]);
  });

  it('a transaction whose connection is terminated from outside before COMMIT fails, and the pool goes on serving', async () => {
    for (let i = 0; i < 3; i++) {
      const failed = await orm.em
        .fork()
        .transactional(async (tx) => {
          const [row] = await tx.execute<{ pid: number }[]>('select pg_backend_pid() as pid');
          await admin.query('select pg_terminate_backend($1)', [row!.pid]);
        })
        .then(
          () => undefined,
          (err: Error) => err,
        );
      expect(failed, 'the commit fails').to.be.instanceOf(Error);
    }
    expect(await within(5000, orm.em.fork().execute('select 1 as one'))).to.deep.equal([{ one: 1 }]);
  });
});
