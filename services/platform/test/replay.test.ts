import type { MikroORM } from '@mikro-orm/postgresql';
import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import type { Nats } from '../src/events/nats.js';
import type { OutboxRelay } from '../src/events/relay.js';
import { parseReplayArguments, replayEvents, replayMsgId } from '../src/events/replay.js';
import { createLogger } from '../src/logging.js';
import { randomSuffix } from '../src/testing.js';
import { type OutboxFixture, startOutboxFixture } from './outbox-fixture.js';

const SCHEMA = 'replaytest';
const MINUTE = 60_000;
const COMPANY = '0190a3c2-6a4f-7b1e-8a3b-0123456789ab';
const OTHER = '0190a3c2-6a4f-7b1e-8a3b-ba9876543210';

describe('events replay: a company outbox range published again with the original event ids (real Postgres and NATS)', () => {
  let orm: MikroORM;
  let nats: Nats;
  let fixture: OutboxFixture;
  let relay: OutboxRelay;
  const run = randomSuffix();
  const stream = `T_${run}`;
  const prefix = `t${run}`;
  const logger = createLogger('test', 'silent');
  const now = Date.now();
  /** company A's events, oldest first: 180, 120, 60 minutes ago (published by the relay), 30 minutes ago (not yet). */
  const a: string[] = [];
  let b = '';

  const messages = async () => (await nats.jsm.streams.info(stream)).state.messages;
  const insert = async (companyId: string, minutesAgo: number, n: number) => {
    const at = now - minutesAgo * MINUTE;
    const id = uuidv7({ msecs: at });
    await orm.em
      .fork()
      .execute(`insert into outbox (id, company_id, event_key, payload, occurred_at) values (?, ?, 'lead.created', ?, ?)`, [
        id,
        companyId,
        JSON.stringify({ lead: { n } }),
        new Date(at),
      ]);
    return id;
  };
  /** The stored messages after sequence `from`: id header and body. */
  const storedAfter = async (from: number) => {
    const last = (await nats.jsm.streams.info(stream)).state.last_seq;
    const out: { msgId: string | undefined; body: string }[] = [];
    for (let seq = from + 1; seq <= last; seq++) {
      const m = await nats.jsm.streams.getMessage(stream, { seq });
      out.push({ msgId: m?.header.get('Nats-Msg-Id'), body: m?.string() ?? '' });
    }
    return out;
  };
  const lastSeq = async () => (await nats.jsm.streams.info(stream)).state.last_seq;

  before(async () => {
    fixture = await startOutboxFixture({ schema: SCHEMA, stream, prefix, logger, name: 'replay-test' });
    ({ orm, nats } = fixture);
    relay = fixture.relay();
    for (const [i, minutes] of [180, 120, 60].entries()) a.push(await insert(COMPANY, minutes, i));
    b = await insert(OTHER, 90, 99);
    while ((await relay.drainOnce()) > 0);
    a.push(await insert(COMPANY, 30, 3)); // recorded, not published yet
  });
  after(async () => {
    await fixture?.close();
  });

  it('publishes the range again: same body and event id, a replay message id the duplicate window lets through', async () => {
    expect(await messages()).to.equal(4);
    const originals = await storedAfter(0);
    const from = await lastSeq();
    const result = await replayEvents({
      orm,
      js: nats.js,
      schema: SCHEMA,
      subjectPrefix: prefix,
      companyId: COMPANY,
      since: new Date(now - 150 * MINUTE),
      until: new Date(now - 45 * MINUTE),
    });
    expect(result).to.deep.include({ replayed: 2, unpublished: 0 });
    const replayed = await storedAfter(from);
    expect(replayed.map((m) => m.msgId)).to.deep.equal([replayMsgId(a[1]!, result.runId), replayMsgId(a[2]!, result.runId)]);
    // Byte for byte the message the relay published, so consumers see the original event.
    for (const m of replayed) {
      const original = originals.find((o) => m.msgId?.startsWith(`${o.msgId}:replay:`));
      expect(m.body).to.equal(original?.body);
    }
    expect(JSON.parse(replayed[0]!.body)).to.deep.include({ event_id: a[1], company_id: COMPANY, payload: { lead: { n: 1 } } });
  });

  it('a second run publishes again (its own message ids); one run publishes once', async () => {
    const before = await messages();
    const range = { since: new Date(now - 150 * MINUTE), until: new Date(now - 45 * MINUTE) };
    const first = await replayEvents({ orm, js: nats.js, schema: SCHEMA, subjectPrefix: prefix, companyId: COMPANY, ...range });
    const second = await replayEvents({ orm, js: nats.js, schema: SCHEMA, subjectPrefix: prefix, companyId: COMPANY, ...range });
    expect(first.runId).to.not.equal(second.runId);
    expect(await messages()).to.equal(before + 4);
    // The same run id again is what the duplicate window is for: nothing new.
    await replayEvents({ orm, js: nats.js, schema: SCHEMA, subjectPrefix: prefix, companyId: COMPANY, ...range, runId: first.runId });
    expect(await messages()).to.equal(before + 4);
  });

  it('takes unpublished rows too, pages through the range in order, and leaves other companies and the outbox alone', async () => {
    const from = await lastSeq();
    const result = await replayEvents({
      orm,
      js: nats.js,
      schema: SCHEMA,
      subjectPrefix: prefix,
      companyId: COMPANY,
      since: new Date(now - 24 * 60 * MINUTE),
      batchSize: 1,
    });
    expect(result).to.deep.include({ replayed: 4, unpublished: 1 });
    const replayed = await storedAfter(from);
    expect(replayed.map((m) => JSON.parse(m.body).event_id)).to.deep.equal(a);
    expect(replayed.map((m) => JSON.parse(m.body).event_id)).to.not.include(b);
    const [row] = await orm.em.fork().execute<{ n: string }[]>('select count(*) as n from outbox where published_at is null');
    expect(Number(row!.n)).to.equal(1);
  });

  it('replays nothing for a range without events', async () => {
    const before = await messages();
    const result = await replayEvents({
      orm,
      js: nats.js,
      schema: SCHEMA,
      subjectPrefix: prefix,
      companyId: COMPANY,
      since: new Date(now - 59 * MINUTE),
      until: new Date(now - 31 * MINUTE),
    });
    expect(result.replayed).to.equal(0);
    expect(await messages()).to.equal(before);
  });

  it('parses the command line and names each problem', () => {
    const fixed = new Date('2026-11-22T12:00:00Z');
    expect(parseReplayArguments('crm', ['--service', 'crm', '--company', COMPANY, '--since', '2026-11-22T09:00:00Z'], fixed)).to.deep.equal(
      {
        companyId: COMPANY,
        since: new Date('2026-11-22T09:00:00Z'),
        until: fixed,
      },
    );
    expect(
      parseReplayArguments('crm', [
        `--company=${COMPANY.toUpperCase()}`,
        '--since=2026-11-22T09:00:00+02:00',
        '--until=2026-11-22T10:00:00Z',
      ]),
    ).to.deep.equal({ companyId: COMPANY, since: new Date('2026-11-22T07:00:00Z'), until: new Date('2026-11-22T10:00:00Z') });
    const fails = (argv: string[], pattern: RegExp) => expect(() => parseReplayArguments('crm', argv)).to.throw(pattern);
    fails(['--service', 'tasks', '--company', COMPANY, '--since', '2026-11-22T09:00:00Z'], /--service tasks/);
    fails(['--company', 'acme', '--since', '2026-11-22T09:00:00Z'], /--company/);
    fails(['--since', '2026-11-22T09:00:00Z'], /--company/);
    fails(['--company', COMPANY], /--since/);
    fails(['--company', COMPANY, '--since', 'yesterday'], /--since/);
    fails(['--company', COMPANY, '--since', '2026-11-22T09:00:00Z', '--until', '2026-11-22T08:00:00Z'], /--until: must be later/);
    fails(['--company', COMPANY, '--since', '2026-11-22T09:00:00Z', '--limit', '3'], /limit/);
  });
});
