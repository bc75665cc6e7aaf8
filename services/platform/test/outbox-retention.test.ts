import type { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import { type OutboxRelay, uuidV7Floor } from '../src/events/relay.js';
import { createLogger } from '../src/logging.js';
import { eventually, randomSuffix } from '../src/testing.js';
import { type OutboxFixture, startOutboxFixture } from './outbox-fixture.js';

const SCHEMA = 'retentiontest';
const HOUR = 3_600_000;
const COMPANY = '0190a3c2-6a4f-7b1e-8a3b-0123456789ab';

describe('outbox retention: the relay deletes published rows past OUTBOX_RETENTION_HOURS (real Postgres)', () => {
  let orm: MikroORM;
  let fixture: OutboxFixture;
  const run = randomSuffix();
  const stream = `T_${run}`;
  const prefix = `t${run}`;
  const logger = createLogger('test', 'silent');
  const relays: OutboxRelay[] = [];

  const relayWith = (o: { retentionHours?: number; pruneBatchSize?: number; pruneIntervalMs?: number }) => {
    const relay = fixture.relay({ idleSweepMs: 200, ...o });
    relays.push(relay);
    return relay;
  };

  /** Inserts a row recorded `ageHours` ago and published `publishedHoursAgo` ago (null: never). */
  const insert = async (ageHours: number, publishedHoursAgo: number | null) => {
    const now = Date.now();
    const id = uuidv7({ msecs: now - ageHours * HOUR });
    await orm.em
      .fork()
      .execute(
        `insert into outbox (id, company_id, event_key, payload, occurred_at, published_at) values (?, ?, 'lead.created', '{}', ?, ?)`,
        [id, COMPANY, new Date(now - ageHours * HOUR), publishedHoursAgo === null ? null : new Date(now - publishedHoursAgo * HOUR)],
      );
    return id;
  };
  const ids = async () => new Set((await orm.em.fork().execute<{ id: string }[]>('select id from outbox')).map((r) => r.id));

  before(async () => {
    fixture = await startOutboxFixture({ schema: SCHEMA, stream, prefix, logger, name: 'retention-test' });
    ({ orm } = fixture);
  });
  afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await orm.em.fork().execute('delete from outbox');
  });
  after(async () => {
    await fixture?.close();
  });

  it('uuidV7Floor is the lowest id of its millisecond', () => {
    const at = new Date('2026-11-22T10:00:00.123Z');
    const floor = uuidV7Floor(at);
    expect(floor).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-0000-0000-000000000000$/);
    expect(uuidv7({ msecs: at.getTime() }) > floor).to.equal(true);
    expect(uuidv7({ msecs: at.getTime() - 1 }) < floor).to.equal(true);
  });

  it('deletes old published rows in bounded batches; keeps recent and unpublished ones', async () => {
    const expired = await Promise.all(Array.from({ length: 25 }, (_, i) => insert(300 + i, 299 + i)));
    const kept = [
      await insert(1, 1), // recent
      await insert(167, 167), // just inside the retention
      await insert(400, null), // never published: never deleted, however old
      await insert(200, 2), // old, but published only 2 hours ago (after an outage): kept from publication
    ];
    const relay = relayWith({ retentionHours: 168, pruneBatchSize: 10 });

    expect(await relay.pruneOnce()).to.equal(10);
    expect((await ids()).size).to.equal(25 + kept.length - 10);
    expect(await relay.pruneExpired()).to.equal(15);
    expect(await ids()).to.deep.equal(new Set(kept));
    expect(relay.prunedTotal).to.equal(25);
    expect(await relay.pruneExpired()).to.equal(0);
    expect(expired.every((id) => !kept.includes(id))).to.equal(true);
  });

  it('honours the configured hours', async () => {
    const young = await insert(3, 3);
    const old = await insert(5, 5);
    expect(await relayWith({ retentionHours: 4 }).pruneExpired()).to.equal(1);
    expect(await ids()).to.deep.equal(new Set([young]));
    expect(old).to.not.equal(young);
  });

  it('deletes nothing without a retention', async () => {
    await insert(10_000, 10_000);
    expect(await relayWith({}).pruneExpired()).to.equal(0);
    expect((await ids()).size).to.equal(1);
  });

  it('a running relay deletes expired rows periodically, and publishes (never deletes) an old unpublished row', async () => {
    const relay = relayWith({ retentionHours: 168, pruneIntervalMs: 200, pruneBatchSize: 3 });
    await relay.start();
    const recent = await insert(0, 0);
    const unpublished = await insert(500, null);
    await Promise.all(Array.from({ length: 7 }, (_, i) => insert(200 + i, 200 + i)));
    const publishedAt = async () =>
      (await orm.em.fork().execute<{ published_at: Date | null }[]>('select published_at from outbox where id = ?', [unpublished]))[0]
        ?.published_at;
    await eventually(async () => (await ids()).size === 2 && (await publishedAt()) != null, 5000);
    expect(await ids()).to.deep.equal(new Set([recent, unpublished]));
    expect(relay.prunedTotal).to.equal(7);
  });
});
