import type { RunningService } from '@svc/platform/service';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { type Harness, Receiver, startHarness } from './harness.js';

const PER_SUBSCRIPTION = 3;
const EACH = 50;

/**
 * A slow receiver must not take every delivery slot: with two replicas, at most WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY
 * of its deliveries are in flight at once over both, and a fast receiver's deliveries, queued after the slow
 * ones, all complete while the slow ones are still going.
 */
describe('webhooks: per-subscription concurrency limit over every replica', () => {
  let h: Harness;
  let replicas: RunningService[];
  let slow: Receiver;
  let fast: Receiver;

  before(async () => {
    h = await startHarness();
    const env = {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: String(PER_SUBSCRIPTION),
      WEBHOOK_CONCURRENCY: '20',
    };
    replicas = [await h.webhooks(env), await h.webhooks(env)];
    slow = await Receiver.start(() => new Promise((resolve) => setTimeout(() => resolve(200), 2000)));
    fast = await Receiver.start(() => 200);
  });
  after(async () => {
    await Promise.all(replicas?.map((r) => r.stop()) ?? []);
    await Promise.all([slow?.close(), fast?.close()]);
    await h?.stop();
  });

  it(`keeps a slow receiver at ${PER_SUBSCRIPTION} in flight while a fast receiver's ${EACH} deliveries all complete`, async function () {
    this.timeout(60_000);
    const [svc] = replicas as [RunningService];
    const companyId = await h.company();
    for (const [receiver, key] of [
      [slow, 'lead.updated'],
      [fast, 'lead.created'],
    ] as const) {
      const res = await h.admin(svc, 'POST', `/companies/${companyId}/webhooks`, { url: receiver.url, events: [key] });
      expect(res.status).to.equal(201);
    }
    // The slow subscription's deliveries are issued first, so they are the oldest due ones.
    await h.publish(svc, companyId, [
      ...Array.from({ length: EACH }, (_, i) => ({ key: 'lead.updated' as const, payload: { n: i } })),
      ...Array.from({ length: EACH }, (_, i) => ({ key: 'lead.created' as const, payload: { n: i } })),
    ]);

    await eventually(() => fast.answered === EACH, 20_000);
    const slowDoneWhenFastDone = slow.answered;

    expect(new Set(fast.eventIds()).size).to.equal(EACH);
    // Two replicas with 20 slots each would have run up to 40 slow deliveries at once without the limit.
    expect(slow.maxInFlight).to.equal(PER_SUBSCRIPTION);
    expect(slowDoneWhenFastDone).to.be.below(EACH / 2);
    // And the slow receiver keeps getting its deliveries, never more than the limit at once.
    await eventually(() => slow.answered >= slowDoneWhenFastDone + 2 * PER_SUBSCRIPTION, 20_000);
    expect(slow.maxInFlight).to.equal(PER_SUBSCRIPTION);
  });
});
