import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from '../src/db/orm.js';
import { connectNats, ensureEventStream, type Nats } from '../src/events/nats.js';
import { OutboxEvent } from '../src/events/outbox.entity.js';
import { OutboxRelay, type RelayOptions } from '../src/events/relay.js';
import type { Logger } from '../src/logging.js';
import { createMetrics } from '../src/metrics.js';
import { createTestDatabase, TEST_NATS_URL, type TestDatabase } from '../src/testing.js';

export interface OutboxFixture {
  db: TestDatabase;
  orm: MikroORM;
  nats: Nats;
  /** A relay of this fixture's outbox to its stream; options override the defaults. */
  relay(options?: Partial<RelayOptions>): OutboxRelay;
  close(): Promise<void>;
}

/** A fresh database with only the outbox table in `schema`, a NATS connection and a stream of this run. */
export async function startOutboxFixture(o: {
  schema: string;
  stream: string;
  prefix: string;
  logger: Logger;
  name: string;
}): Promise<OutboxFixture> {
  const db = await createTestDatabase();
  const orm = await MikroORM.init(ormConfig({ url: db.url, schema: o.schema, entities: [OutboxEvent], migrations: [] }));
  await orm.em.fork().execute(`create schema ${o.schema}`);
  await orm.schema.create();
  const nats = await connectNats(TEST_NATS_URL, o.name, o.logger);
  await ensureEventStream(nats.jsm, o.stream, o.prefix);
  return {
    db,
    orm,
    nats,
    relay: (options = {}) =>
      new OutboxRelay({
        orm,
        js: nats.js,
        schema: o.schema,
        subjectPrefix: o.prefix,
        logger: o.logger,
        metrics: createMetrics('test'),
        ...options,
      }),
    close: async () => {
      await nats.jsm.streams.delete(o.stream).catch(() => undefined);
      await nats.nc.close();
      await orm.close(true);
      await db.drop();
    },
  };
}
