import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { adminOf, seedTenant } from '../support/fixtures.js';
import { type Child, spawnEntry, waitReady } from '../support/processes.js';
import { freePort, type Stack, startStack } from '../support/stack.js';

const LEADS = 100;
/** Connections the sender opens to one origin (WebhookSender): the stopped replica's other attempts wait for one. */
const CONNECTIONS = 64;

/** A replica's count of deliveries whose lease it found taken by another (webhook_leases_lost_total). */
async function leasesLost(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return Number(/^webhook_leases_lost_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
}

/**
 * Two webhooks replicas; the one holding every delivery in flight is paused (SIGSTOP). The other takes them over
 * once their short leases run out unrenewed and delivers them while the first is still stopped. Resumed (SIGCONT),
 * the first records nothing and sends nothing more, not even the attempts that were waiting for a connection: an
 * event whose request had reached the receiver before the pause arrives twice, once from each replica (the
 * documented at-least-once resend), every other event once (decision 0156).
 */
describe('fault: a paused webhooks replica loses its deliveries to the other', () => {
  let stack: Stack;
  let db: pg.Client | undefined;
  let second: Child | undefined;
  let paused: Child | undefined;
  let receiver: http.Server;
  /** Requests held open until the gate opens. */
  let held: http.ServerResponse[] = [];
  let open = false;
  const received: string[] = [];

  after(async () => {
    paused?.proc.kill('SIGCONT');
    await db?.end();
    await second?.stop();
    receiver?.closeAllConnections();
    receiver?.close();
    await stack?.stop();
  });

  it(`delivers the ${LEADS} deliveries a stopped replica held through the other, and the resumed one adds nothing`, async function () {
    this.timeout(180_000);
    stack = await startStack({ processes: ['webhooks'], webhooks: { WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: '200' } });
    const first = stack.processes.webhooks!;
    const call = client(stack.gatewayUrl).call;
    const admin = adminOf(call, stack.adminToken);
    const t = await seedTenant(call, stack.adminToken, { rate_limit_per_minute: 1_000_000 });
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).event_id);
        if (open) res.writeHead(200).end();
        else held.push(res);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const sub = await admin('POST', `/companies/${t.company.id}/webhooks`, { url, events: ['lead.created'] });
    expect(sub.status, sub.text).to.equal(201);
    // Read from Postgres: the gateway's admin routes reach the webhooks service through the replica that is paused.
    db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    const deliveries = async () =>
      (
        await db!.query<{ event_id: string; status: string; attempts: number }>(
          `select d.event_id, d.status, (select count(*)::int from webhooks.delivery_attempts a where a.delivery_id = d.id) as attempts
             from webhooks.deliveries d where d.subscription_id = $1`,
          [sub.body.id],
        )
      ).rows;

    for (let i = 0; i < LEADS; i++) {
      const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: `Pause ${i}` } });
      expect(res.status, res.text).to.equal(201);
    }
    // The only replica has taken every delivery: as many as it has connections are held open by the receiver, the
    // others wait in the sender for a connection.
    await eventually(async () => {
      const leased = await db!.query(
        `select count(*)::int as n from webhooks.deliveries where lease_owner is not null and status = 'pending'`,
      );
      return held.length === CONNECTIONS && leased.rows[0].n === LEADS;
    }, 60_000);
    const sentBeforePause = new Set(received);

    // A second replica on the same database and stream, then the first stops making progress.
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    second = spawnEntry('services/webhooks/src/main.ts', { ...first.env, HTTP_PORT: String(httpPort), GRPC_PORT: String(grpcPort) });
    await waitReady(`http://127.0.0.1:${httpPort}`);
    paused = first.child;
    paused.proc.kill('SIGSTOP');
    // The receiver answers the stopped replica's requests now; it cannot read or record the answers.
    open = true;
    for (const res of held) res.writeHead(200).end();
    held = [];

    // Taken over and delivered while the first replica is still stopped (its leases would otherwise hold them).
    const done = await eventually(async () => {
      const rows = await deliveries();
      return rows.length === LEADS && rows.every((d) => d.status === 'succeeded') ? rows : undefined;
    }, 30_000);
    expect(paused.proc.exitCode).to.equal(null);
    const ids = done.map((d) => d.event_id);
    expect(new Set(received.slice(CONNECTIONS))).to.deep.equal(new Set(ids));

    // Resumed: it finds every lease taken, records none of its attempts and sends nothing again.
    paused.proc.kill('SIGCONT');
    paused = undefined;
    await eventually(async () => (await leasesLost(first.metricsUrl)) === LEADS, 30_000);
    for (const d of await deliveries()) {
      expect(d.status, d.event_id).to.equal('succeeded');
      expect(d.attempts, d.event_id).to.equal(1);
    }
    expect(received).to.have.length(CONNECTIONS + LEADS);
    for (const id of ids)
      expect(
        received.filter((r) => r === id),
        id,
      ).to.have.length(sentBeforePause.has(id) ? 2 : 1);
  });
});
