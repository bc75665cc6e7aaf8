import { randomUUID } from 'node:crypto';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const RETRY_BASE_MS = 50;

describe('webhook deliveries through the gateway: rule 2, the delivery log and redelivery', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let receiver: WebhookReceiver;

  before(async () => {
    // Retries wait 50 ms, 100 ms, ... instead of the spec's 3 s, 6 s, ... so the tests see them quickly.
    stack = await startStack({ webhooks: { WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS) } });
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    receiver = await WebhookReceiver.start();
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  const subscribe = async (t: Tenant, url: string, extra: Record<string, unknown> = {}) => {
    const res = await admin('POST', `/companies/${t.company.id}/webhooks`, { url, events: ['lead.created', 'lead.updated'], ...extra });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const createLead = async (t: Tenant, title: string) => {
    const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title } });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const deliveries = (t: Tenant, sub: any, query = '') => admin('GET', `/companies/${t.company.id}/webhooks/${sub.id}/deliveries${query}`);
  /** The log once `count` deliveries exist and none is pending. */
  const settled = (t: Tenant, sub: any, count: number) =>
    eventually(async () => {
      const res = await deliveries(t, sub, '?take=100');
      return res.body.total === count && res.body.records.every((d: any) => d.status !== 'pending') ? res.body : undefined;
    }, 20_000);
  const outcomes = (d: any) => d.attempts.map((a: any) => [a.status_code, a.error]);

  describe('rule 2: which answers are retried', () => {
    it('resends after a 500 with the same event id and identical body bytes, and the 200 confirms', async () => {
      const t = await seedTenant(call, stack.adminToken);
      const name = `${t.company.id}/500-then-200`;
      const sub = await subscribe(
        t,
        receiver.route(name, (_r, nth) => (nth === 1 ? 500 : 200)),
      );
      await createLead(t, 'Flaky receiver');
      const [d] = (await settled(t, sub, 1)).records;
      const got = receiver.on(name);
      expect(got).to.have.length(2);
      const [first, second] = got as [any, any];
      expect(second.headers['x-svc-event-id']).to.equal(first.headers['x-svc-event-id']);
      expect(first.headers['x-svc-event-id']).to.equal(first.body.event_id);
      expect(second.raw.equals(first.raw)).to.equal(true);
      expect(second.headers['x-svc-signature']).to.equal(first.headers['x-svc-signature']);
      expect(d.status).to.equal('succeeded');
      expect(d.event_id).to.equal(first.body.event_id);
      expect(outcomes(d)).to.deep.equal([
        [500, 'HTTP 500'],
        [200, null],
      ]);
      expect(Date.parse(d.attempts[1].at) - Date.parse(d.attempts[0].at)).to.be.at.least(RETRY_BASE_MS);
    });

    it('makes exactly one attempt on a 400 and ends the delivery failed', async () => {
      const t = await seedTenant(call, stack.adminToken);
      const name = `${t.company.id}/400`;
      const sub = await subscribe(
        t,
        receiver.route(name, () => 400),
        { max_retries: 5 },
      );
      await createLead(t, 'Refused');
      const [d] = (await settled(t, sub, 1)).records;
      expect(d.status).to.equal('failed');
      expect(d.next_attempt_at).to.equal(null);
      expect(outcomes(d)).to.deep.equal([[400, 'HTTP 400']]);
      expect(receiver.on(name)).to.have.length(1);
    });

    it('with max_retries 1 makes exactly two attempts on a receiver that always answers 503, then fails', async () => {
      const t = await seedTenant(call, stack.adminToken);
      const name = `${t.company.id}/503`;
      const sub = await subscribe(
        t,
        receiver.route(name, () => 503),
        { max_retries: 1 },
      );
      await createLead(t, 'Unavailable');
      const [d] = (await settled(t, sub, 1)).records;
      expect(d.status).to.equal('failed');
      expect(d.next_attempt_at).to.equal(null);
      expect(outcomes(d)).to.deep.equal([
        [503, 'HTTP 503'],
        [503, 'HTTP 503'],
      ]);
      const got = receiver.on(name);
      expect(got).to.have.length(2);
      expect(got[1]!.raw.equals(got[0]!.raw)).to.equal(true);
    });
  });

  describe('the delivery log and redelivery (admin API)', () => {
    let t: Tenant;
    let other: Tenant;
    let sub: any;
    let unreachable: any;
    let otherSub: any;
    let log: any;
    let acceptRejected = false;
    const name = () => `${t.company.id}/log`;
    const TITLES = ['Ok one', 'Flaky', 'Rejected', 'Ok two'];
    const requestsOf = (title: string) => receiver.on(name()).filter((r) => r.body.payload.lead.title === title);
    const deliveryOf = (title: string, records = log.records) =>
      records.find((d: any) => d.event_id === requestsOf(title)[0]!.body.event_id);

    before(async () => {
      t = await seedTenant(call, stack.adminToken);
      other = await seedTenant(call, stack.adminToken);
      const url = receiver.route(name(), (r, nth) => {
        const title = r.body.payload.lead.title;
        if (title === 'Flaky') return nth === 1 ? 500 : 200;
        if (title === 'Rejected') return acceptRejected ? 200 : 422;
        return 200;
      });
      sub = await subscribe(t, url, { max_retries: 3 });
      unreachable = await subscribe(t, 'http://127.0.0.1:1/closed', { max_retries: 0 });
      otherSub = await subscribe(
        other,
        receiver.route(`${other.company.id}/log`, () => 200),
      );
      for (const title of TITLES) await createLead(t, title);
      await createLead(other, 'Another company');
      log = await settled(t, sub, TITLES.length);
      await settled(t, unreachable, TITLES.length);
      await settled(other, otherSub, 1);
    });

    it('records every attempt with its time, status code, error and duration', async () => {
      for (const d of log.records) {
        expect(d).to.have.all.keys('id', 'event_id', 'event_key', 'status', 'attempts', 'next_attempt_at', 'created_at');
        expect(d.event_key).to.equal('lead.created');
        expect(d.next_attempt_at).to.equal(null);
        for (const a of d.attempts) {
          expect(a).to.have.all.keys('at', 'status_code', 'error', 'duration_ms');
          expect(Date.parse(a.at)).to.be.at.least(Date.parse(d.created_at));
          expect(a.duration_ms).to.be.a('number').and.at.least(0);
        }
      }
      const flaky = deliveryOf('Flaky');
      expect(flaky.status).to.equal('succeeded');
      expect(outcomes(flaky)).to.deep.equal([
        [500, 'HTTP 500'],
        [200, null],
      ]);
      expect(Date.parse(flaky.attempts[1].at)).to.be.above(Date.parse(flaky.attempts[0].at));
      expect(deliveryOf('Rejected')).to.deep.include({ status: 'failed' });
      expect(outcomes(deliveryOf('Rejected'))).to.deep.equal([[422, 'HTTP 422']]);
      expect(outcomes(deliveryOf('Ok one'))).to.deep.equal([[200, null]]);
      // The event id of each delivery is the one its receiver saw in x-svc-event-id.
      expect(log.records.map((d: any) => d.event_id).sort()).to.deep.equal(
        TITLES.map((title) => requestsOf(title)[0]!.headers['x-svc-event-id']).sort(),
      );

      const down = (await deliveries(t, unreachable, '?take=100')).body;
      expect(down.records.map((d: any) => d.status)).to.deep.equal(['failed', 'failed', 'failed', 'failed']);
      for (const d of down.records) {
        expect(d.attempts).to.have.length(1);
        expect(d.attempts[0].status_code).to.equal(null);
        expect(d.attempts[0].error).to.match(/ECONNREFUSED/);
      }
    });

    it('filters by status and event key, and pages newest first with skip and take', async () => {
      const titlesOf = (records: any[]) => records.map((d) => TITLES.find((title) => deliveryOf(title, records) === d));
      const all = (await deliveries(t, sub)).body;
      expect(all.total).to.equal(4);
      expect(titlesOf(all.records)).to.deep.equal(['Ok two', 'Rejected', 'Flaky', 'Ok one']);

      const failed = (await deliveries(t, sub, '?status=failed')).body;
      expect(failed.total).to.equal(1);
      expect(titlesOf(failed.records)).to.deep.equal(['Rejected']);
      expect((await deliveries(t, sub, '?status=succeeded')).body.total).to.equal(3);
      expect((await deliveries(t, sub, '?status=pending')).body).to.deep.equal({ total: 0, records: [] });
      expect((await deliveries(t, sub, '?event_key=lead.created')).body.total).to.equal(4);
      expect((await deliveries(t, sub, '?event_key=lead.updated')).body).to.deep.equal({ total: 0, records: [] });
      expect((await deliveries(t, sub, '?status=failed&event_key=lead.created')).body.total).to.equal(1);

      const page1 = (await deliveries(t, sub, '?take=2')).body;
      const page2 = (await deliveries(t, sub, '?skip=2&take=2')).body;
      expect([page1.total, page2.total]).to.deep.equal([4, 4]);
      expect(titlesOf(page1.records)).to.deep.equal(['Ok two', 'Rejected']);
      expect(titlesOf(page2.records)).to.deep.equal(['Flaky', 'Ok one']);
      expect((await deliveries(t, sub, '?skip=4')).body.records).to.deep.equal([]);
      expect((await deliveries(t, sub, '?skip=-3&take=1')).body.records[0].id).to.equal(all.records[0].id);

      const bad = await deliveries(t, sub, '?status=lost');
      expect(bad.status).to.equal(400);
      expect(bad.body.message).to.contain('status');
    });

    it('redelivers with the same event id and identical body bytes, adding the new attempts to the log', async () => {
      acceptRejected = true;
      for (const title of ['Rejected', 'Ok one']) {
        const d = deliveryOf(title);
        const res = await admin('POST', `/companies/${t.company.id}/webhooks/${sub.id}/deliveries/${d.id}/redeliver`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.include({ id: d.id, event_id: d.event_id, event_key: 'lead.created', status: 'pending' });
        const [first, again] = await eventually(() => requestsOf(title).length === 2 && requestsOf(title), 10_000);
        expect(again!.headers['x-svc-event-id']).to.equal(d.event_id);
        expect(again!.raw.equals(first!.raw)).to.equal(true);
        expect(again!.headers['x-svc-signature']).to.equal(first!.headers['x-svc-signature']);
      }
      const now = await eventually(async () => {
        const records = (await deliveries(t, sub)).body.records;
        return records.every((d: any) => d.status === 'succeeded') && records;
      });
      expect(outcomes(deliveryOf('Rejected', now))).to.deep.equal([
        [422, 'HTTP 422'],
        [200, null],
      ]);
      expect(outcomes(deliveryOf('Ok one', now))).to.deep.equal([
        [200, null],
        [200, null],
      ]);
    });

    it("answers 404 for another company's subscription or delivery, and leaves the delivery as it was", async () => {
      const d = deliveryOf('Ok two');
      const redeliver = (cid: string, subId: string, deliveryId: string) =>
        admin('POST', `/companies/${cid}/webhooks/${subId}/deliveries/${deliveryId}/redeliver`);
      expect((await redeliver(other.company.id, sub.id, d.id)).status).to.equal(404);
      expect((await redeliver(other.company.id, otherSub.id, d.id)).status).to.equal(404);
      expect((await redeliver(t.company.id, unreachable.id, d.id)).status).to.equal(404);
      expect((await redeliver(t.company.id, sub.id, randomUUID())).status).to.equal(404);
      expect((await redeliver(t.company.id, sub.id, 'not-a-uuid')).status).to.equal(404);
      const otherDelivery = (await deliveries(other, otherSub)).body.records[0];
      expect((await redeliver(t.company.id, sub.id, otherDelivery.id)).status).to.equal(404);
      expect((await deliveries(other, sub)).status).to.equal(404);
      expect((await deliveries(t, otherSub)).status).to.equal(404);

      const after = deliveryOf('Ok two', (await deliveries(t, sub)).body.records);
      expect(after).to.deep.equal(d);
      expect(requestsOf('Ok two')).to.have.length(1);
    });
  });
});
