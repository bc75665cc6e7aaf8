import { Migration } from '@mikro-orm/migrations';
import { expect } from 'chai';
import pg from 'pg';
import { createOrm, migrate } from '../src/db/orm.js';
import { OutboxEvent } from '../src/events/outbox.entity.js';
import { createTestDatabase, type TestDatabase } from '../src/testing.js';

/** A migration slow enough that two replicas starting together are inside it at the same time. */
class CreateThings extends Migration {
  override async up(): Promise<void> {
    this.addSql('select pg_sleep(0.3)');
    this.addSql('create table "things" ("id" serial primary key, "name" text not null)');
  }
}

describe('migrate: replicas of one service starting together', () => {
  let db: TestDatabase;
  afterEach(async () => db?.drop());

  it('applies each migration once when several replicas migrate the same schema at the same time', async () => {
    db = await createTestDatabase();
    const orms = await Promise.all(
      [1, 2, 3].map(() => createOrm({ url: db.url, schema: 'racing', entities: [OutboxEvent], migrations: [CreateThings], poolMax: 2 })),
    );
    try {
      const outcomes = await Promise.allSettled(orms.map((orm) => migrate(orm, 'racing')));
      expect(outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok'))).to.deep.equal(['ok', 'ok', 'ok']);
    } finally {
      await Promise.all(orms.map((orm) => orm.close(true)));
    }
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query(`select name from racing.mikro_orm_migrations`);
      expect(rows).to.have.length(1);
      await client.query(`insert into racing.things (name) values ('x')`);
    } finally {
      await client.end();
    }
  });
});
