import { createHmac } from 'node:crypto';
import type { RunningService } from '@svc/platform/service';
import { eventually } from '@svc/platform/testing';
import { verifyWebhook } from '@svc/webhook-verify';
import { expect } from 'chai';
import { type Harness, Receiver, startHarness } from './harness.js';

const hmac = (secret: string, raw: Buffer) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

/**
 * A delivery issued before a secret rotation and retried after it, once the old secret's grace has ended: the retry
 * is signed with the subscription's current secret, which is all its receiver still accepts.
 */
describe('webhooks: an attempt is signed with the secret its subscription has at that attempt', () => {
  let h: Harness;
  let svc: RunningService;
  let receiver: Receiver;

  before(async () => {
    h = await startHarness();
    svc = await h.webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_BASE_MS: '500' });
  });
  after(async () => {
    await receiver?.close();
    await h?.stop();
  });

  it('signs the retry of a delivery issued before a rotation with the new secret only, after the grace ended', async function () {
    this.timeout(30_000);
    let rotated = false;
    // Refuses every attempt until the rotation is done, so the delivery waits on a retry across it.
    receiver = await Receiver.start(() => (rotated ? 200 : 503));
    const companyId = await h.company();
    const created = await h.admin(svc, 'POST', `/companies/${companyId}/webhooks`, { url: receiver.url, events: ['lead.created'] });
    expect(created.status).to.equal(201);
    const oldSecret: string = created.body.secret;
    const [eventId] = await h.publish(svc, companyId, [{ key: 'lead.created', payload: { n: 1 } }]);
    await eventually(() => receiver.received.length >= 1, 10_000);
    const first = receiver.received[0]!;
    expect(first.headers['x-svc-signature']).to.equal(hmac(oldSecret, first.raw));

    // Rotated with no grace: the old secret stops being valid at once.
    const patched = await h.admin(svc, 'PATCH', `/companies/${companyId}/webhooks/${created.body.id}`, {
      rotate_secret: true,
      secret_rotation_grace_seconds: 0,
    });
    expect(patched.status).to.equal(200);
    const newSecret: string = patched.body.secret;
    expect(newSecret).to.not.equal(oldSecret);
    rotated = true;

    const retry = await eventually(() => receiver.received.find((r, i) => i > 0 && r.body.event_id === eventId), 15_000);
    expect(retry.headers['x-svc-signature'], 'x-svc-signature of the retry').to.equal(hmac(newSecret, retry.raw));
    // The Standard Webhooks signature too: the receiver that only has the new secret verifies it.
    expect(verifyWebhook({ body: retry.raw, headers: retry.headers, secrets: [newSecret] }).event_id).to.equal(eventId);
    expect(() => verifyWebhook({ body: retry.raw, headers: retry.headers, secrets: [oldSecret] })).to.throw();
    const log = await eventually(async () => {
      const res = await h.admin(svc, 'GET', `/companies/${companyId}/webhooks/${created.body.id}/deliveries`);
      return res.body.records.find((d: { status: string }) => d.status === 'succeeded');
    }, 10_000);
    expect(log.attempts.length).to.be.at.least(2);
  });
});
