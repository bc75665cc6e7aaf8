import { randomBytes } from 'node:crypto';
import { connectNats } from '@svc/platform/events/nats';
import { createLogger } from '@svc/platform/logging';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { burstTenant, type LeadReceiver, summary } from '../faults/helpers.js';
import { client } from '../support/client.js';
import { type OwnNats, type OwnPostgres, startOwnNats, startOwnPostgres } from '../support/servers.js';
import { type OwnRedis, startOwnRedis } from './support/redis.js';
import { DEPLOYABLES, type System, startSystem } from './support/system.js';

/** Rounds over every fault (CI: 1; RELIABILITY_FAULT_CYCLES=5 for a longer run). */
const CYCLES = Number(process.env.RELIABILITY_FAULT_CYCLES ?? 1);
/** Concurrent clients creating leads. */
const CLIENTS = Number(process.env.RELIABILITY_FAULT_CLIENTS ?? 4);
/** Leads acknowledged between two faults, so each fault lands under load. */
const BETWEEN = Number(process.env.RELIABILITY_FAULT_PROGRESS ?? 10);
/** A creation whose idempotency key stays in use (409) this long was cut in the middle: the client gives it up. */
const ABANDON_MS = Number(process.env.RELIABILITY_ABANDON_MS ?? 20_000);

const SERVERS = ['nats', 'redis', 'postgres'] as const;
type Fault = (typeof DEPLOYABLES)[number] | (typeof SERVERS)[number];

/**
 * A client as the spec expects one: every creation carries an idempotency key and is retried with the same key after
 * a network error, a 5xx or a 409 (still processing) until it is answered with the lead, or given up after ABANDON_MS.
 */
function ledgerLoad(call: ReturnType<typeof client>['call'], token: string, run: string, phase: () => string) {
  const acknowledged = new Map<number, string>();
  const abandoned = new Set<number>();
  const failures = new Map<string, number>();
  let next = 0;
  let stopped = false;
  const note = (what: string) => {
    const key = `${phase()}:${what}`;
    failures.set(key, (failures.get(key) ?? 0) + 1);
  };
  const worker = async () => {
    while (!stopped) {
      const n = next++;
      const giveUpAt = Date.now() + ABANDON_MS;
      for (;;) {
        if (Date.now() > giveUpAt) {
          abandoned.add(n);
          break;
        }
        try {
          const res = await call('POST', '/integrations/external/leads', {
            token,
            body: { title: `Ledger ${run} ${n}` },
            headers: { 'x-idempotency-key': `ledger-${run}-${n}` },
          });
          if (res.status === 201 || res.status === 200) {
            acknowledged.set(n, res.body.id);
            break;
          }
          note(String(res.status));
        } catch (err) {
          note((err as Error).message);
        }
        await new Promise((r) => setTimeout(r, 100)); // the client's back-off between retries
      }
    }
  };
  const done = Promise.all(Array.from({ length: CLIENTS }, worker));
  return {
    acknowledged,
    abandoned,
    failures,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

describe('reliability: kill -9 of every deployable and restarts of NATS, Redis and Postgres under load, then a ledger', () => {
  let nats: OwnNats | undefined;
  let postgres: OwnPostgres | undefined;
  let redis: OwnRedis | undefined;
  let system: System | undefined;
  let receiver: LeadReceiver | undefined;
  let db: pg.Client | undefined;

  after(async () => {
    await db?.end();
    await receiver?.close();
    await system?.stop().catch(() => undefined);
    await Promise.all([nats?.close(), postgres?.close(), redis?.close()]);
  });

  it(`loses and duplicates nothing over ${CYCLES} cycle(s) of ${DEPLOYABLES.length + SERVERS.length} faults`, async function () {
    this.timeout(300_000 + CYCLES * 240_000);
    [nats, postgres, redis] = await Promise.all([startOwnNats(), startOwnPostgres(), startOwnRedis()]);
    system = await startSystem({ natsUrl: nats.url, postgresUrl: postgres.url, redisUrl: redis.url, logLevel: 'warn' });
    const { call } = client(system.gatewayUrl);
    const setup = await burstTenant(call, system.adminToken);
    const t = setup.t;
    receiver = setup.receiver;

    const run = randomBytes(4).toString('hex');
    let current = 'steady';
    const load = ledgerLoad(call, t.key.key, run, () => current);
    const faults: Fault[] = [...DEPLOYABLES, ...SERVERS];
    const log: string[] = [];
    let injected = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      for (const fault of faults) {
        const before = load.acknowledged.size;
        await eventually(() => load.acknowledged.size >= before + BETWEEN, 120_000, 50);
        current = fault;
        if (fault === 'nats') {
          await nats.kill();
          await nats.start();
        } else if (fault === 'redis') {
          await redis.kill();
          await redis.start();
        } else if (fault === 'postgres') {
          await postgres.stop('immediate');
          await postgres.start();
        } else {
          await system.deployed[fault].kill9();
          await system.deployed[fault].start();
        }
        injected++;
        log.push(`${fault}@${load.acknowledged.size}`);
      }
    }
    const last = load.acknowledged.size;
    await eventually(() => load.acknowledged.size >= last + BETWEEN, 120_000, 50);
    await load.stop();

    // The ledger, from crm's own table: every acknowledged creation exactly once, under its own id.
    db = new pg.Client({ connectionString: system.env.DATABASE_URL });
    await db.connect();
    const { rows } = await db.query<{ title: string; ids: string[] }>(
      'select title, array_agg(id::text) as ids from crm.leads where company_id = $1 group by title',
      [t.company.id],
    );
    const byTitle = new Map(rows.map((r) => [r.title, r.ids]));
    const lost = [...load.acknowledged].filter(([n, id]) => !byTitle.get(`Ledger ${run} ${n}`)?.includes(id));
    const duplicated = rows.filter((r) => r.ids.length > 1);
    const committed = rows.flatMap((r) => r.ids);

    // Every committed lead's event reaches the subscriber, always under one event id; nothing left on its way.
    const stuck = async () => {
      const outboxes = await db!.query<{ n: string }>(
        `select (select count(*) from crm.outbox where published_at is null) + (select count(*) from tasks.outbox where published_at is null)
              + (select count(*) from chat.outbox where published_at is null) + (select count(*) from files.outbox where published_at is null)
              + (select count(*) from webhooks.outbox where published_at is null) as n`,
      );
      const pending = await db!.query<{ n: string }>(`select count(*) as n from webhooks.deliveries where status = 'pending'`);
      const nc = await connectNats(nats!.url, 'reliability-ledger', createLogger('test', 'silent'));
      try {
        const consumer = await nc.jsm.consumers.info(system!.env.NATS_STREAM!, 'webhooks');
        return Number(outboxes.rows[0]!.n) + Number(pending.rows[0]!.n) + consumer.num_pending + consumer.num_ack_pending;
      } finally {
        await nc.nc.close();
      }
    };
    await eventually(async () => committed.every((id) => receiver!.byLead.has(id)) && (await stuck()) === 0, 180_000, 250);
    const undelivered = committed.filter((id) => !receiver!.byLead.has(id));
    const unstable = committed.filter((id) => (receiver!.byLead.get(id)?.size ?? 0) > 1);

    const figures = {
      cycles: CYCLES,
      faults: injected,
      acknowledged: load.acknowledged.size,
      abandoned: load.abandoned.size,
      committed: committed.length,
      events: receiver.events.size,
      deliveries: receiver.requests(),
      lost: lost.length,
      duplicated: duplicated.length,
      undelivered: undelivered.length,
    };
    console.log(`      ${JSON.stringify(figures)}`);
    console.log(`      faults at (acknowledged so far): ${log.join(' ')}`);
    console.log(`      failed attempts (retried): ${summary(load.failures)}`);
    expect(receiver.problems).to.deep.equal([]);
    // An outage is a 503 (retry) or a refused connection, never a 500 that tells a client its request was wrong.
    expect(
      [...load.failures].filter(([what]) => what.endsWith(':500')),
      'attempts answered 500',
    ).to.deep.equal([]);
    expect(lost, 'acknowledged creations missing').to.deep.equal([]);
    expect(duplicated, 'titles created twice').to.deep.equal([]);
    expect(undelivered, 'committed leads whose lead.created never arrived').to.deep.equal([]);
    expect(unstable, 'leads delivered under two event ids').to.deep.equal([]);
    expect(await stuck()).to.equal(0);
    expect(load.acknowledged.size).to.be.at.least(BETWEEN * (injected + 1));
    // The faults make every process log its errors (a warn-level run): none of them carries a secret of the run.
    const logs = system.logs();
    console.log(`      ${logs.split('\n').filter(Boolean).length} log lines scanned for the key, the admin token and the webhook secret`);
    for (const secret of [t.key.key, system.adminToken, receiver.secret])
      expect(logs.includes(secret), 'a secret in the logs').to.equal(false);
  });
});
