import { connectNats, type Nats } from '@svc/platform/events/nats';
import { outboxMessageData } from '@svc/platform/events/relay';
import { createLogger } from '@svc/platform/logging';
import { eventually, TEST_NATS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { type Stack, startStack } from '../support/stack.js';
import { backlog, burstTenant, type LeadReceiver, leadBurst, quiet } from './helpers.js';

const BURST = 200;
/** How many of the rows the crashed relay had published before it died (the rest it never reached). */
const PUBLISHED_BEFORE_CRASH = 150;

/**
 * The crm relay crashes between publishing a batch and marking it published: the rows are on JetStream
 * (Nats-Msg-Id = event id) and still unpublished in the outbox. The restarted relay publishes them all
 * again and marks them; the duplicate window drops the copies, so each event is on the stream once and
 * the receiver gets each event id exactly once.
 */
describe('fault: the outbox relay crashing between publish and mark delivers no duplicate', () => {
  let stack: Stack | undefined;
  let receiver: LeadReceiver | undefined;
  let nats: Nats | undefined;
  let db: pg.Client | undefined;

  after(async () => {
    await db?.end();
    await nats?.nc.close();
    await receiver?.close();
    await stack?.stop();
  });

  it(`delivers each of ${BURST} events exactly once after the relay republishes ${PUBLISHED_BEFORE_CRASH} of them`, async function () {
    this.timeout(240_000);
    stack = await startStack();
    const call = client(stack.gatewayUrl).call;
    const setup = await burstTenant(call, stack.adminToken);
    const t = setup.t;
    receiver = setup.receiver;

    // The relay is down while the leads are created: every event waits in the outbox.
    const relay = stack.services.crm.relay;
    await relay.stop();
    const burst = leadBurst(call, t.key.key, { total: BURST, concurrency: 8 });
    await burst.done;
    expect(burst.created.length).to.equal(BURST);

    // What the relay had done when it crashed: published part of its batch exactly as it publishes,
    // without the mark.
    db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    const { rows } = await db.query(
      `select id, company_id, event_key, payload::text as payload, occurred_at from crm.outbox
        where published_at is null and event_key = 'lead.created' order by id`,
    );
    expect(rows).to.have.length(BURST);
    nats = await connectNats(TEST_NATS_URL, 'relay-crash-test', createLogger('test', 'silent'));
    const prefix = stack.env.EVENT_SUBJECT_PREFIX!;
    const acks = await Promise.all(
      rows
        .slice(0, PUBLISHED_BEFORE_CRASH)
        .map((row) => nats!.js.publish(`${prefix}.${row.event_key}`, outboxMessageData(row), { msgID: row.id })),
    );
    expect(acks.every((a) => !a.duplicate)).to.equal(true);
    // The consumer is already turning those into deliveries while the relay comes back.
    await eventually(() => receiver!.events.size > 0, 30_000);

    await relay.start();
    await eventually(async () => receiver!.events.size >= BURST && quiet(await backlog(stack!, TEST_NATS_URL)), 120_000, 250);

    const stream = await nats.jsm.streams.info(stack.env.NATS_STREAM!, { subjects_filter: `${prefix}.lead.created` });
    expect(stream.state.subjects?.[`${prefix}.lead.created`], 'each event once on the stream').to.equal(BURST);
    expect((await backlog(stack, TEST_NATS_URL)).deliveries).to.equal(BURST);
    expect(receiver.problems).to.deep.equal([]);
    expect(receiver.requests()).to.equal(BURST);
    expect([...receiver.confirmations.values()].every((n) => n === 1)).to.equal(true);
    expect(new Set(receiver.events.values())).to.deep.equal(new Set(burst.created));
    expect(new Set(receiver.events.keys())).to.deep.equal(new Set(rows.map((r) => r.id)));
  });
});
