import type { RunningService } from '@svc/platform/service';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { type Harness, Receiver, startHarness } from './harness.js';

const EVENTS = 6;

/**
 * Leases are short (decision 0156) but renewed by the replica whose attempt is running: with two healthy replicas and
 * a receiver slower than several leases, no delivery is taken over, so each is sent once and has one attempt.
 */
describe('webhooks: leases renewed while attempts run', () => {
  let h: Harness;
  let replicas: RunningService[];
  let slow: Receiver;

  before(async () => {
    h = await startHarness();
    const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_LEASE_MS: '1000' };
    replicas = [await h.webhooks(env), await h.webhooks(env)];
    // Answers each request after three lease lengths.
    slow = await Receiver.start(() => new Promise((resolve) => setTimeout(() => resolve(200), 3000)));
  });
  after(async () => {
    await Promise.all(replicas?.map((r) => r.stop()) ?? []);
    await slow?.close();
    await h?.stop();
  });

  it(`sends each of ${EVENTS} deliveries once though each attempt outlasts its lease three times`, async function () {
    this.timeout(60_000);
    const [svc] = replicas as [RunningService];
    const companyId = await h.company();
    const sub = await h.admin(svc, 'POST', `/companies/${companyId}/webhooks`, { url: slow.url, events: ['lead.created'] });
    expect(sub.status).to.equal(201);
    const ids = await h.publish(
      svc,
      companyId,
      Array.from({ length: EVENTS }, (_, i) => ({ key: 'lead.created' as const, payload: { n: i } })),
    );
    const records = await eventually(async () => {
      const res = await h.admin(svc, 'GET', `/companies/${companyId}/webhooks/${sub.body.id}/deliveries`);
      const all = res.body.records as { status: string; attempts: unknown[] }[];
      return all.length === EVENTS && all.every((d) => d.status === 'succeeded') ? all : undefined;
    }, 40_000);
    for (const d of records) expect(d.attempts).to.have.length(1);
    expect(slow.eventIds().sort()).to.deep.equal([...ids].sort());
  });
});
