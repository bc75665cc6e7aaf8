import { createHmac } from 'node:crypto';
import type { CrmPeer } from '@svc/platform/peers/crm';
import { eventually } from '@svc/platform/testing';
import { verifyWebhook } from '@svc/webhook-verify';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { startReceiver } from '../support/receiver.js';
import { type Stack, startStack } from '../support/stack.js';

describe('webhook delivery rules through the whole system', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const failOnce = new Set<string>();

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    receiver = await startReceiver((r) => {
      const id = r.body?.event_id as string;
      if (r.path.startsWith('/flaky') && !failOnce.has(id)) {
        failOnce.add(id);
        return 503;
      }
      return 200;
    });
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  const createLead = async (t: Tenant, title: string) => {
    const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title } });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string };
  };

  it('envelope {event_id, event_key, payload} with the Standard Webhooks headers, verified by the subscriber helper', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const sub = (
      await admin('POST', `/companies/${t.company.id}/webhooks`, { url: receiver.url(`/${t.company.id}/std`), events: ['lead.created'] })
    ).body;
    expect(sub.standard_webhooks_secret).to.equal(`whsec_${Buffer.from(sub.secret).toString('base64')}`);
    const lead = await createLead(t, 'Verified');
    const got = await eventually(() => receiver.received.find((r) => r.path === `/${t.company.id}/std`));
    expect(Object.keys(got.body).sort()).to.deep.equal(['event_id', 'event_key', 'payload']);
    expect(got.headers['webhook-id']).to.equal(got.body.event_id);
    const event = verifyWebhook({ body: got.raw, headers: got.headers as Record<string, string>, secrets: [sub.secret] });
    expect(event.payload).to.have.nested.property('lead.id', lead.id);
  });

  it('rule 4: a delivery keeps the URL and configuration captured at issue; later edits and deletion do not change it', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const path = `/flaky/${t.company.id}/a`;
    const sub = (
      await admin('POST', `/companies/${t.company.id}/webhooks`, {
        url: receiver.url(path),
        events: ['lead.created'],
        headers: { 'X-Version': 'one' },
      })
    ).body;
    const lead = await createLead(t, 'Captured');
    await eventually(() => receiver.received.some((r) => r.path === path), 10_000);
    // The first attempt was refused; while it waits for its retry, the subscription changes and then goes away.
    const edited = await admin('PATCH', `/companies/${t.company.id}/webhooks/${sub.id}`, {
      url: receiver.url(`/${t.company.id}/b`),
      headers: { 'X-Version': 'two' },
    });
    expect(edited.status).to.equal(200);
    const second = await createLead(t, 'After the edit');
    // Deletion stops issuing, not sending: the second event is issued first (under load the consumer issued it after
    // the DELETE and there was nothing to send).
    await eventually(async () => {
      const log = await admin('GET', `/companies/${t.company.id}/webhooks/${sub.id}/deliveries`);
      return log.body.records?.length >= 2;
    }, 30_000);
    expect((await admin('DELETE', `/companies/${t.company.id}/webhooks/${sub.id}`)).status).to.equal(200);
    const attempts = await eventually(() => {
      const a = receiver.received.filter((r) => r.path === path);
      return a.length >= 2 ? a : undefined;
    }, 20_000);
    expect(attempts.map((a) => a.body.payload.lead.id)).to.deep.equal([lead.id, lead.id]);
    expect(attempts.map((a) => a.headers['x-version'])).to.deep.equal(['one', 'one']);
    expect(attempts[0]!.raw.equals(attempts[1]!.raw)).to.equal(true);
    expect(attempts[1]!.headers['x-svc-event-id']).to.equal(attempts[0]!.headers['x-svc-event-id']);
    const newer = await eventually(() => receiver.received.find((r) => r.path === `/${t.company.id}/b`), 30_000);
    expect(newer.body.payload.lead.id).to.equal(second.id);
    expect(newer.headers['x-version']).to.equal('two');
  });

  it('rule 5: several events from one action are each delivered', async () => {
    const t = await seedTenant(call, stack.adminToken);
    await admin('POST', `/companies/${t.company.id}/webhooks`, {
      url: receiver.url(`/${t.company.id}/multi`),
      events: ['lead.stage_changed', 'lead.updated'],
    });
    // A stage move fires lead.stage_changed and lead.updated in one transaction.
    const lead = await createLead(t, 'Moving');
    const moved = await call('PUT', `/integrations/external/leads/${lead.id}`, {
      token: t.key.key,
      body: { title: 'Moving', stage_id: t.pipeline.stages[1].id },
    });
    expect(moved.status, moved.text).to.equal(200);
    const got = await eventually(() => {
      const r = receiver.received.filter((x) => x.path === `/${t.company.id}/multi`);
      return r.length >= 2 ? r : undefined;
    });
    expect(got.map((r) => r.headers['x-svc-event']).sort()).to.deep.equal(['lead.stage_changed', 'lead.updated']);
    expect(new Set(got.map((r) => r.body.event_id)).size).to.equal(2);
  });

  it('rule 7: events are issued only while the plan is valid, and are not sent later', async () => {
    const t = await seedTenant(call, stack.adminToken);
    await admin('POST', `/companies/${t.company.id}/webhooks`, { url: receiver.url(`/${t.company.id}/plan`), events: ['lead.created'] });
    await admin('PATCH', `/companies/${t.company.id}`, { plan_valid_until: new Date(Date.now() - 1000).toISOString() });
    const outside = await createLead(t, 'Outside the plan');
    // crm owns the plan and checks it in the creating transaction: the event was never written.
    const [row] = await stack.services.crm.ctx.orm.em
      .fork()
      .execute<{ n: string }[]>(`select count(*) as n from outbox where payload->'lead'->>'id' = ?`, [outside.id]);
    expect(Number(row!.n)).to.equal(0);
    // The plan is renewed; only what happens from now on is issued.
    await admin('PATCH', `/companies/${t.company.id}`, { plan_valid_until: null });
    // The webhooks service's own check (events issued before an expiry but consumed after it) caches a company 2 s:
    // ask its crm peer until the renewal shows.
    const { crm } = stack.services.webhooks!.deps as { crm: CrmPeer };
    await eventually(async () => !(await crm.getCompany(t.company.id)).plan_valid_until, 5000);
    const inside = await createLead(t, 'Inside the plan');
    const got = await eventually(() => receiver.received.find((r) => r.path === `/${t.company.id}/plan`));
    expect(got.body.payload.lead.id).to.equal(inside.id);
    await eventually(async () => (await stack.services.crm.relay.status()).pending === 0);
    const all = receiver.received.filter((r) => r.path === `/${t.company.id}/plan`).map((r) => r.body.payload.lead.id);
    expect(all).to.deep.equal([inside.id]);
    expect(all).to.not.include(outside.id);
  });

  it('rotates a secret: during the grace webhook-signature verifies with either secret, x-svc-signature is the new one alone', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const sub = (
      await admin('POST', `/companies/${t.company.id}/webhooks`, { url: receiver.url(`/${t.company.id}/rot`), events: ['lead.created'] })
    ).body;
    const rotated = (
      await admin('PATCH', `/companies/${t.company.id}/webhooks/${sub.id}`, { rotate_secret: true, secret_rotation_grace_seconds: 3600 })
    ).body;
    expect(rotated.secret).to.not.equal(sub.secret);
    expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).to.be.within(3_500_000, 3_600_000);
    await createLead(t, 'Rotating');
    const got = await eventually(() => receiver.received.find((r) => r.path === `/${t.company.id}/rot`));
    for (const secret of [sub.secret, rotated.secret]) {
      expect(verifyWebhook({ body: got.raw, headers: got.headers as Record<string, string>, secrets: [secret] }).event_key).to.equal(
        'lead.created',
      );
    }
    // The spec's header is one HMAC of the body (issue 23 item 10): the current secret's.
    expect(got.headers['x-svc-signature']).to.equal(`sha256=${createHmac('sha256', rotated.secret).update(got.raw).digest('hex')}`);
    const { 'webhook-id': _i, 'webhook-timestamp': _t, 'webhook-signature': _s, ...svcOnly } = got.headers;
    const legacy = (secret: string) =>
      verifyWebhook({ body: got.raw, headers: svcOnly as Record<string, string>, secrets: [secret], legacySignature: true });
    expect(legacy(rotated.secret).event_key).to.equal('lead.created');
    expect(() => legacy(sub.secret)).to.throw(/x-svc-signature/);
    const bad = await admin('PATCH', `/companies/${t.company.id}/webhooks/${sub.id}`, { rotate_secret: true, secret: 'x'.repeat(20) });
    expect(bad.status).to.equal(400);
  });
});
