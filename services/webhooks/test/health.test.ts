import { nativePool } from '@svc/platform/db/native';
import type { RunningService } from '@svc/platform/service';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { shouldDisable } from '../src/deliveries/subscription-health.js';
import { findSubscription, updateSubscription } from '../src/subscriptions/subscription.store.js';
import { type Harness, Receiver, startHarness } from './harness.js';

describe('webhooks: disabling a subscription whose deliveries keep failing', () => {
  describe('the rule', () => {
    const policy = { disableAfterFailures: 20, disableAfterMs: 24 * 3600 * 1000 };
    const now = new Date('2026-01-02T12:00:00Z');
    const hoursAgo = (h: number) => new Date(now.getTime() - h * 3600 * 1000);
    it('needs both enough consecutive failed deliveries and enough time failing', () => {
      expect(shouldDisable(20, hoursAgo(24), now, policy)).to.equal(true);
      expect(shouldDisable(500, hoursAgo(23.9), now, policy)).to.equal(false);
      expect(shouldDisable(19, hoursAgo(72), now, policy)).to.equal(false);
    });
    it('never disables with WEBHOOK_DISABLE_AFTER_FAILURES=0', () => {
      expect(shouldDisable(10_000, hoursAgo(1000), now, { ...policy, disableAfterFailures: 0 })).to.equal(false);
    });
  });

  describe('the service with WEBHOOK_DISABLE_AFTER_FAILURES=3 and WEBHOOK_DISABLE_AFTER_MS=0', () => {
    let h: Harness;
    let svc: RunningService;
    let companyId: string;
    /** Answers each delivery with the status its payload asks for. */
    let flaky: Receiver;
    let control: Receiver;
    /** Subscribed to webhook.disabled only. */
    let watcher: Receiver;
    let flakySub: any;
    let disabledWhileEvent = '';
    let n = 0;
    const path = () => `/companies/${companyId}/webhooks`;
    const health = async (id: string) =>
      (
        await svc.ctx.orm.em
          .fork()
          .execute<{ consecutive_failures: number; failing_since: Date | null }[]>(
            'select consecutive_failures, failing_since from subscriptions where id = ?',
            [id],
          )
      )[0]!;
    /** Issues one lead.created asking the flaky receiver for `status`; resolves when its delivery to `sub` has ended. */
    const send = async (status: number, sub = flakySub) => {
      const [eventId] = await h.publish(svc, companyId, [{ key: 'lead.created', payload: { n: ++n, status } }]);
      return eventually(async () => {
        const log = await h.admin(svc, 'GET', `${path()}/${sub.id}/deliveries?take=100`);
        return log.body.records.find((d: any) => d.event_id === eventId && d.status !== 'pending');
      }, 15_000);
    };

    before(async () => {
      h = await startHarness();
      svc = await h.webhooks({
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_DISABLE_AFTER_FAILURES: '3',
        WEBHOOK_DISABLE_AFTER_MS: '0',
        WEBHOOK_RETRY_BASE_MS: '20',
      });
      companyId = await h.company();
      flaky = await Receiver.start((req) => req.body.payload.status);
      control = await Receiver.start(() => 200);
      watcher = await Receiver.start(() => 200);
      const w = await h.admin(svc, 'POST', path(), { url: watcher.url, events: ['webhook.disabled'] });
      expect(w.status).to.equal(201);
      flakySub = (await h.admin(svc, 'POST', path(), { url: flaky.url, events: ['lead.created'], max_retries: 0 })).body;
      expect(flakySub.id).to.be.a('string');
      expect(flakySub).to.include({ disabled_at: null, disabled_reason: null });
      const c = await h.admin(svc, 'POST', path(), { url: control.url, events: ['lead.created'] });
      expect(c.status).to.equal(201);
    });
    after(async () => {
      await Promise.all([flaky?.close(), control?.close(), watcher?.close()]);
      await h?.stop();
    });

    it('counts deliveries that end failed, not attempts: three failed attempts of one delivery are one failure', async () => {
      const retried = (await h.admin(svc, 'POST', path(), { url: `${flaky.url}/retried`, events: ['deal.won'], max_retries: 2 })).body;
      const [eventId] = await h.publish(svc, companyId, [{ key: 'deal.won', payload: { status: 503 } }]);
      const ended = await eventually(async () => {
        const log = await h.admin(svc, 'GET', `${path()}/${retried.id}/deliveries`);
        return log.body.records.find((d: any) => d.event_id === eventId && d.status === 'failed');
      }, 15_000);
      expect(ended.attempts.map((a: any) => a.status_code)).to.deep.equal([503, 503, 503]);
      expect((await health(retried.id)).consecutive_failures).to.equal(1);
      expect((await h.admin(svc, 'GET', `${path()}/${retried.id}`)).body).to.include({ active: true, disabled_at: null });
    });

    it('starts the count again after any success', async () => {
      expect((await send(500)).status).to.equal('failed');
      expect((await send(500)).status).to.equal('failed');
      expect(await health(flakySub.id)).to.include({ consecutive_failures: 2 });
      expect((await send(200)).status).to.equal('succeeded');
      expect(await health(flakySub.id)).to.deep.equal({ consecutive_failures: 0, failing_since: null });
      await send(500);
      await send(422);
      expect((await health(flakySub.id)).consecutive_failures).to.equal(2);
      const view = (await h.admin(svc, 'GET', `${path()}/${flakySub.id}`)).body;
      expect(view).to.include({ active: true, disabled_at: null, disabled_reason: null });
    });

    it('disables it at the third consecutive failed delivery, saying why and since when', async () => {
      const first = (await h.admin(svc, 'GET', `${path()}/${flakySub.id}/deliveries?status=failed&take=2`)).body.records[1];
      const third = await send(500);
      const view = (await h.admin(svc, 'GET', `${path()}/${flakySub.id}`)).body;
      expect(view.active).to.equal(false);
      expect(view.disabled_at).to.equal(third.attempts[0].at);
      // The run began when the first of the three deliveries ended (its only attempt).
      expect(view.disabled_reason).to.equal(
        `disabled after 3 consecutive failed deliveries since ${first.attempts[0].at}; last error: HTTP 500`,
      );
      expect(view.events).to.deep.equal(['lead.created']);
    });

    it('tells the company’s subscriptions that asked for webhook.disabled, once', async () => {
      const view = (await h.admin(svc, 'GET', `${path()}/${flakySub.id}`)).body;
      const got = await eventually(() => watcher.received.find((r) => r.body.event_key === 'webhook.disabled'), 15_000);
      expect(got.body.payload).to.deep.equal({
        webhook: { id: flakySub.id, url: flaky.url, description: null },
        reason: 'failing',
        disabled_reason: view.disabled_reason,
        disabled_at: view.disabled_at,
      });
      expect(watcher.received).to.have.length(1);
    });

    it('issues no delivery to it while disabled, and the other subscriptions still get the event', async () => {
      const before = flaky.received.length;
      const [eventId] = await h.publish(svc, companyId, [{ key: 'lead.created', payload: { n: ++n, status: 200 } }]);
      // The control subscription got it, so the consumer has handled this event.
      await eventually(() => control.eventIds().includes(eventId!), 15_000);
      const log = (await h.admin(svc, 'GET', `${path()}/${flakySub.id}/deliveries?take=100`)).body;
      expect(log.records.map((d: any) => d.event_id)).not.to.include(eventId);
      expect(flaky.received.length).to.equal(before);
      disabledWhileEvent = eventId!;
    });

    it('re-enables with PATCH {active: true}: a clean record, and new events only', async () => {
      const res = await h.admin(svc, 'PATCH', `${path()}/${flakySub.id}`, { active: true });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ active: true, disabled_at: null, disabled_reason: null });
      expect(await health(flakySub.id)).to.deep.equal({ consecutive_failures: 0, failing_since: null });
      const next = await send(200);
      expect(next.status).to.equal('succeeded');
      expect(flaky.eventIds()).to.include(next.event_id);
      expect(flaky.eventIds()).not.to.include(disabledWhileEvent);
    });

    it('leaves an operator-deactivated subscription without disabled_at, and keeps counting from zero when re-enabled', async () => {
      const off = await h.admin(svc, 'PATCH', `${path()}/${flakySub.id}`, { active: false });
      expect(off.body).to.include({ active: false, disabled_at: null, disabled_reason: null });
      const on = await h.admin(svc, 'PATCH', `${path()}/${flakySub.id}`, { active: true });
      expect(on.body.active).to.equal(true);
      await send(500);
      expect((await health(flakySub.id)).consecutive_failures).to.equal(1);
    });

    it('keeps the failure run the dispatcher wrote while an edit of the subscription was under way', async () => {
      const pool = await nativePool(svc.ctx.orm);
      const read = (await findSubscription(pool, companyId, flakySub.id))!;
      // Between the edit's read and its write, the delivery path counts two more failed deliveries.
      await pool.query('update subscriptions set consecutive_failures = consecutive_failures + 2 where id = $1', [flakySub.id]);
      await updateSubscription(pool, read, { ...read, description: 'edited', updatedAt: new Date() });
      expect((await health(flakySub.id)).consecutive_failures).to.equal(read.consecutiveFailures + 2);
      expect((await h.admin(svc, 'GET', `${path()}/${flakySub.id}`)).body.description).to.equal('edited');
    });
  });
});
