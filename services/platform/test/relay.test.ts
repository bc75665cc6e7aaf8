import type { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { inTransaction, nativePool } from '../src/db/native.js';
import type { Nats } from '../src/events/nats.js';
import { eventsRecorded, type OutboxRow } from '../src/events/outbox.js';
import { claimUnpublished } from '../src/events/outbox.store.js';
import type { EventToRecord } from '../src/events/payloads.js';
import { type OutboxRelay, pollWaitMs } from '../src/events/relay.js';
import { OutboxWriter } from '../src/events/writer.js';
import { createLogger } from '../src/logging.js';
import { createMetrics } from '../src/metrics.js';
import { eventually, randomSuffix } from '../src/testing.js';
import { type OutboxFixture, startOutboxFixture } from './outbox-fixture.js';

const SCHEMA = 'relaytest';

describe('transactional outbox and its relay to JetStream (real Postgres and NATS)', () => {
  let orm: MikroORM;
  let nats: Nats;
  let fixture: OutboxFixture;
  let relay: OutboxRelay;
  const run = randomSuffix();
  const stream = `T_${run}`;
  const prefix = `t${run}`;
  const logger = createLogger('test', 'silent');

  const messages = async () => (await nats.jsm.streams.info(stream)).state.messages;
  const unpublished = async () =>
    Number((await orm.em.fork().execute<{ n: string }[]>(`select count(*) as n from outbox where published_at is null`))[0]!.n);

  // No plan gate: these tests are about what the relay publishes of what was committed.
  const writer = new OutboxWriter(SCHEMA, { kind: 'none' });
  const write = async (events: EventToRecord[]) => inTransaction(await nativePool(orm), (tx) => writer.write(tx, events));

  before(async () => {
    fixture = await startOutboxFixture({ schema: SCHEMA, stream, prefix, logger, name: 'relay-test' });
    ({ orm, nats } = fixture);
    relay = fixture.relay({ idleSweepMs: 200 });
  });
  after(async () => {
    await relay?.stop();
    await fixture?.close();
  });

  it('publishes a committed event with Nats-Msg-Id = event id on the subject of its key, and marks it', async () => {
    await relay.start();
    const [id] = await write([
      { companyId: '0190a3c2-6a4f-7b1e-8a3b-0123456789ab', eventKey: 'lead.created', payload: { lead: { id: 'x' } } },
    ]);
    await eventually(async () => (await messages()) === 1, 5000);
    const msg = await nats.jsm.streams.getMessage(stream, { last_by_subj: `${prefix}.lead.created` });
    expect(msg?.header.get('Nats-Msg-Id')).to.equal(id);
    expect(msg?.json()).to.deep.include({
      event_id: id,
      event_key: 'lead.created',
      company_id: '0190a3c2-6a4f-7b1e-8a3b-0123456789ab',
      payload: { lead: { id: 'x' } },
    });
    await eventually(async () => (await unpublished()) === 0, 5000);
  });

  it('publishes nothing for a rolled-back transaction', async () => {
    const before = await messages();
    await inTransaction(await nativePool(orm), async (tx) => {
      await writer.write(tx, [{ companyId: '0190a3c2-6a4f-7b1e-8a3b-0123456789ab', eventKey: 'lead.updated', payload: {} }]);
      throw new Error('rollback');
    }).catch(() => undefined);
    // A later event, committed: once the relay has published it, it has looked past where the rolled-back one was.
    const [marker] = await write([
      { companyId: '0190a3c2-6a4f-7b1e-8a3b-0123456789ab', eventKey: 'lead.updated', payload: { marker: true } },
    ]);
    await eventually(async () => (await messages()) === before + 1, 5000);
    const last = await nats.jsm.streams.getMessage(stream, { last_by_subj: `${prefix}.lead.updated` });
    expect(last?.header.get('Nats-Msg-Id')).to.equal(marker);
    expect(await unpublished()).to.equal(0);
  });

  it('publishes, by its sweep, an event that no commit of its process announced (written by another process)', async () => {
    const before = await messages();
    // Written as another replica or a hand-written statement would: no eventsRecorded, so nothing wakes this relay.
    await orm.em
      .fork()
      .execute(
        `insert into outbox (id, company_id, event_key, payload, occurred_at) values ('${uuidv7()}', '0190a3c2-6a4f-7b1e-8a3b-0123456789ab', 'lead.updated', '{}', now())`,
      );
    await eventually(async () => (await messages()) === before + 1, 5000);
    await eventually(async () => (await unpublished()) === 0, 5000);
  });

  it('a relay that crashed between publish and mark republishes, and JetStream drops the duplicate', async () => {
    await relay.stop();
    const before = await messages();
    const [id] = await write([{ companyId: '0190a3c2-6a4f-7b1e-8a3b-0123456789ab', eventKey: 'chat.message_received', payload: { n: 1 } }]);
    // What the crashed relay had done: the publish, without the mark.
    const first = await nats.js.publish(`${prefix}.chat.message_received`, JSON.stringify({ event_id: id }), { msgID: id });
    expect(first.duplicate).to.equal(false);
    expect(await unpublished()).to.equal(1);
    expect(await relay.drainOnce()).to.equal(1);
    expect(await messages()).to.equal(before + 1);
    expect(await unpublished()).to.equal(0);
  });

  it('drains a backlog of 120 events and reports the pending count', async () => {
    const before = await messages();
    await write(
      Array.from({ length: 120 }, (_, i) => ({
        companyId: '0190a3c2-6a4f-7b1e-8a3b-0123456789ab',
        eventKey: 'lead.updated',
        payload: { i },
      })),
    );
    expect((await relay.status()).pending).to.equal(120);
    while ((await relay.drainOnce()) > 0);
    expect(await messages()).to.equal(before + 120);
    expect(await relay.status()).to.deep.equal({ pending: 0, oldestPendingAgeMs: 0 });
  });

  it('exports the backlog and the age of its oldest unpublished row when scraped, and nothing once it is published', async () => {
    const metrics = createMetrics('outbox-scrape-test');
    const scraped = fixture.relay({ metrics });
    while ((await scraped.drainOnce()) > 0);
    const gauge = async (name: string) => {
      const text = await metrics.registry.metrics();
      return Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
    };
    // A row written an hour ago that no relay published (NATS away, say).
    await orm.em
      .fork()
      .execute(
        `insert into ${SCHEMA}.outbox (id, company_id, event_key, payload, occurred_at) values (?, ?, 'lead.updated', '{}', now() - interval '1 hour')`,
        [uuidv7(), '0190a3c2-6a4f-7b1e-8a3b-0123456789ab'],
      );
    expect(await gauge('outbox_pending')).to.equal(1);
    expect(await gauge('outbox_oldest_pending_age_seconds')).to.be.at.least(3600);
    while ((await scraped.drainOnce()) > 0);
    expect(await gauge('outbox_pending')).to.equal(0);
    expect(await gauge('outbox_oldest_pending_age_seconds')).to.equal(0);
    expect(await gauge('outbox_published_total')).to.equal(1);
  });

  it('stops at once when stop() comes while it looks for events (no idle wait left behind)', async () => {
    // A sweep a minute away: a stop() that only cancelled a wait which did not exist yet would take that minute.
    const slow = fixture.relay({ idleSweepMs: 60_000 });
    await slow.start(); // its first look (which finds nothing) is now in flight
    const stopped = await Promise.race([
      slow.stop().then(() => 'stopped'),
      new Promise((r) => setTimeout(r, 15_000, 'still waiting after 15 s')),
    ]);
    expect(stopped).to.equal('stopped');
  });

  it('claims with BEGIN in the same message (claim and COMMIT: two round trips); a failed publish rolls the marks back', async () => {
    await eventually(async () => (await unpublished()) === 0, 5000);
    await relay.stop();
    const pool = await nativePool(orm);
    const sent: string[] = [];
    const patched: PoolClient[] = [];
    const connect = pool.connect.bind(pool) as () => Promise<PoolClient>;
    (pool as { connect: unknown }).connect = async () => {
      const client = await connect();
      if (patched.includes(client)) return client;
      const query = client.query.bind(client) as (q: string | { text: string }, ...rest: unknown[]) => unknown;
      (client as { query: unknown }).query = (q: string | { text: string }, ...rest: unknown[]) => {
        sent.push(typeof q === 'string' ? q : q.text);
        return query(q, ...rest);
      };
      patched.push(client);
      return client;
    };
    const company = '0190a3c2-6a4f-7b1e-8a3b-0123456789ab';
    try {
      const ids = await write([1, 2, 3].map((n) => ({ companyId: company, eventKey: 'lead.updated', payload: { n } })));
      sent.length = 0;
      let claimed: OutboxRow[] = [];
      const keep = async (rows: OutboxRow[]) => {
        claimed = rows;
      };
      expect(await claimUnpublished(orm, SCHEMA, 10, keep)).to.equal(3);
      // A connection's first claim prepares the statement once.
      expect(sent.filter((q) => !q.startsWith('prepare '))).to.deep.equal([
        `begin; execute "outbox-relay-claim-begun-${SCHEMA}"(10)`,
        'commit',
      ]);
      // UPDATE … RETURNING gives no order.
      expect(claimed.map((r) => r.id)).to.have.members(ids);
      expect(claimed.map((r) => JSON.parse(r.payload as string))).to.have.deep.members([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(await unpublished()).to.equal(0);

      await write([{ companyId: company, eventKey: 'lead.updated', payload: { n: 4 } }]);
      const failed = await claimUnpublished(orm, SCHEMA, 10, async () => {
        throw new Error('publish failed');
      }).catch((err: Error) => err.message);
      expect(failed).to.equal('publish failed');
      expect(await unpublished()).to.equal(1);
      expect(await claimUnpublished(orm, SCHEMA, 10, async () => undefined)).to.equal(1);
      expect(await unpublished()).to.equal(0);
    } finally {
      delete (pool as { connect?: unknown }).connect;
      for (const client of patched) delete (client as { query?: unknown }).query;
    }
  });
});

describe('the relay while events flow one per commit (real Postgres and NATS)', () => {
  const SCHEMA_FLOW = 'relayflow';
  let fixture: OutboxFixture;
  let relay: OutboxRelay;
  const run = randomSuffix();
  const stream = `TF_${run}`;
  const prefix = `tf${run}`;
  const logger = createLogger('test', 'silent');
  const company = '0190a3c2-6a4f-7b1e-8a3b-0123456789ab';
  const messages = async () => (await fixture.nats.jsm.streams.info(stream)).state.messages;
  const writer = new OutboxWriter(SCHEMA_FLOW, { kind: 'none' });
  const write = async (n: number) =>
    inTransaction(await nativePool(fixture.orm), (tx) =>
      writer.write(tx, [{ companyId: company, eventKey: 'lead.updated', payload: { n } }]),
    );

  before(async () => {
    fixture = await startOutboxFixture({ schema: SCHEMA_FLOW, stream, prefix, logger, name: 'relay-flow-test' });
    // No sweep within the test: whatever is published was found through an in-process wake-up or while polling.
    relay = fixture.relay({ idleSweepMs: 60_000, coalesceMs: 5 });
    await relay.start();
  });
  after(async () => {
    await relay?.stop();
    await fixture?.close();
  });

  it('publishes every event of a flow, several per transaction, and one after a quiet spell at once', async () => {
    for (let n = 0; n < 150; n++) await write(n);
    await eventually(async () => (await messages()) === 150, 10_000);
    // Each relay transaction stamps its rows with its own now().
    const [row] = await fixture.orm.em.fork().execute<{ batches: string }[]>('select count(distinct published_at) as batches from outbox');
    expect(Number(row!.batches)).to.be.below(150);
    // The flow is over: the relay waits for a wake-up again, so a lone event is published without waiting for a sweep.
    await new Promise((r) => setTimeout(r, 200));
    const before = performance.now();
    await write(150);
    await eventually(async () => (await messages()) === 151, 5000, 5);
    expect(performance.now() - before).to.be.below(1000);
  });
});

describe('the relay woken in-process by the commits of its own process (real Postgres and NATS)', () => {
  const SCHEMA_WAKE = 'relaywake';
  let fixture: OutboxFixture;
  let relay: OutboxRelay;
  const run = randomSuffix();
  const stream = `TW_${run}`;
  const prefix = `tw${run}`;
  const company = '0190a3c2-6a4f-7b1e-8a3b-0123456789ab';
  const messages = async () => (await fixture.nats.jsm.streams.info(stream)).state.messages;
  const insert = (db: Pick<PoolClient, 'query'>, n: number) =>
    db.query(
      `insert into ${SCHEMA_WAKE}.outbox (id, company_id, event_key, payload, occurred_at) values ($1, $2, 'lead.updated', $3, now())`,
      [uuidv7(), company, JSON.stringify({ n })],
    );

  before(async () => {
    fixture = await startOutboxFixture({ schema: SCHEMA_WAKE, stream, prefix, logger: createLogger('test', 'silent'), name: 'relay-wake' });
    // No sweep within the test: what is published was found because a commit of this process woke the relay.
    relay = fixture.relay({ idleSweepMs: 600_000 });
    await relay.start();
    // Its first look is over (it found nothing) once a drain of nothing has happened at least once.
    await eventually(async () => (await relay.status()).pending === 0, 5000);
  });
  after(async () => {
    await relay?.stop();
    await fixture?.close();
  });

  it('publishes events written in a transaction (inTransaction) once it commits, and those of a rollback never', async () => {
    const pool = await nativePool(fixture.orm);
    await inTransaction(pool, async (client) => {
      await insert(client, 1);
      eventsRecorded(client, SCHEMA_WAKE);
    });
    await eventually(async () => (await messages()) === 1, 10_000, 5);
    await inTransaction(pool, async (client) => {
      await insert(client, 2);
      eventsRecorded(client, SCHEMA_WAKE);
      throw new Error('rollback');
    }).catch(() => undefined);
    // An autocommit statement on the pool wakes the relay at once; by then the rolled-back row would have been seen.
    await insert(pool, 3);
    eventsRecorded(pool, SCHEMA_WAKE);
    await eventually(async () => (await messages()) === 2, 10_000, 5);
    const [row] = await fixture.orm.em.fork().execute<{ n: string }[]>(`select count(*) as n from ${SCHEMA_WAKE}.outbox`);
    expect(Number(row!.n)).to.equal(2);
  });

  it("another schema's commits do not wake this one's relay", async () => {
    // A relay that is still polling the last flow would find the row without any wake-up.
    await eventually(() => !relay.flowing, 5000, 5);
    const pool = await nativePool(fixture.orm);
    const before = await messages();
    await insert(pool, 4);
    eventsRecorded(pool, 'someotherschema');
    expect(await relay.drainOnce()).to.equal(1);
    expect(await messages()).to.equal(before + 1);
  });
});

describe("the relay's poll while events flow", () => {
  it('starts the next batch the poll interval after the last one started, at once when that batch took longer', () => {
    // A batch started at 100 and ended at 102: the next starts at 105, not at 107.
    expect(pollWaitMs(5, 100, 102)).to.equal(3);
    expect(pollWaitMs(5, 100, 100)).to.equal(5);
    expect(pollWaitMs(5, 100, 105)).to.equal(0);
    expect(pollWaitMs(5, 100, 112)).to.equal(0);
  });
});
