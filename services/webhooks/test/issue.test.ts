import type { RunningService } from '@svc/platform/service';
import { eventually } from '@svc/platform/testing';
import { verifyWebhook } from '@svc/webhook-verify';
import { expect } from 'chai';
import { type Harness, Receiver, startHarness } from './harness.js';

/** The service's counter of attempts started, by where their delivery came from (issued: leased as inserted). */
async function started(svc: RunningService): Promise<{ issued: number; claimed: number }> {
  const text = await (await fetch(`${svc.metricsUrl}/metrics`)).text();
  const value = (source: string) =>
    Number(new RegExp(`^webhook_attempts_started_total\\{[^}]*source="${source}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { issued: value('issued'), claimed: value('claimed') };
}

describe('webhooks: deliveries leased to the issuing process as they are inserted', () => {
  let h: Harness;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.stop();
  });

  it('sends a delivery issued while its dispatcher has room at once, without claiming it back from Postgres', async () => {
    const svc = await h.webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    const receiver = await Receiver.start();
    try {
      const companyId = await h.company();
      const sub = await h.admin(svc, 'POST', `/companies/${companyId}/webhooks`, { url: receiver.url, events: ['lead.created'] });
      expect(sub.status).to.equal(201);
      const before = await started(svc);
      const [eventId] = await h.publish(svc, companyId, [{ key: 'lead.created', payload: { n: 1 } }]);
      await eventually(() => receiver.eventIds().includes(eventId!), 10_000);
      const log = await eventually(async () => {
        const res = await h.admin(svc, 'GET', `/companies/${companyId}/webhooks/${sub.body.id}/deliveries`);
        return res.body.records.find((d: any) => d.event_id === eventId && d.status === 'succeeded');
      });
      expect(log.attempts).to.have.length(1);
      const after = await started(svc);
      expect(after.issued - before.issued).to.equal(1);
      expect(after.claimed - before.claimed).to.equal(0);
    } finally {
      await receiver.close();
      await svc.stop();
    }
  });

  it('keeps every row of a batch as it was, text that JSON escapes and the subscription headers included', async function () {
    this.timeout(30_000);
    const svc = await h.webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    const receiver = await Receiver.start();
    try {
      const companyId = await h.company();
      const headers = { 'X-Quote': 'a "b" \\ c' };
      const sub = await h.admin(svc, 'POST', `/companies/${companyId}/webhooks`, { url: receiver.url, events: ['lead.created'], headers });
      expect(sub.status).to.equal(201);
      // More rows than one statement once took with bound parameters; the rows travel as one JSON document (decision 0230).
      const texts = Array.from({ length: 12 }, (_, n) => `n${n} "quoted" \\ back\\slash\nnew line\t tab ação ✓ 😀 </script> \u2028`);
      const ids = await h.publish(
        svc,
        companyId,
        texts.map((text, n) => ({ key: 'lead.created', payload: { n, text } })),
      );
      await eventually(() => ids.every((id) => receiver.eventIds().includes(id)), 10_000);
      for (const [n, id] of ids.entries()) {
        const got = receiver.received.find((r) => r.body.event_id === id)!;
        expect(got.body).to.deep.equal({ event_id: id, event_key: 'lead.created', payload: { n, text: texts[n] } });
        expect(got.headers['x-quote']).to.equal(headers['X-Quote']);
      }
      const log = await h.admin(svc, 'GET', `/companies/${companyId}/webhooks/${sub.body.id}/deliveries?take=50`);
      expect(log.body.records.map((d: any) => d.event_id).sort()).to.deep.equal([...ids].sort());
    } finally {
      await receiver.close();
      await svc.stop();
    }
  });

  it('queues what finds no room in Postgres and claims it later, oldest first, each sent once', async function () {
    this.timeout(30_000);
    // One delivery in flight at a time, to a receiver that takes longer than the consumer waits for room.
    const svc = await h.webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_CONCURRENCY: '1' });
    const receiver = await Receiver.start(() => new Promise((resolve) => setTimeout(() => resolve(200), 400)));
    try {
      const companyId = await h.company();
      expect(
        (await h.admin(svc, 'POST', `/companies/${companyId}/webhooks`, { url: receiver.url, events: ['lead.created'] })).status,
      ).to.equal(201);
      const before = await started(svc);
      const ids = await h.publish(
        svc,
        companyId,
        Array.from({ length: 5 }, (_, n) => ({ key: 'lead.created', payload: { n } })),
      );
      await eventually(() => receiver.answered === 5, 20_000);
      expect(receiver.eventIds()).to.deep.equal(ids);
      expect(receiver.maxInFlight).to.equal(1);
      const after = await started(svc);
      expect(after.issued - before.issued).to.be.at.least(1);
      expect(after.claimed - before.claimed).to.be.at.least(1);
      expect(after.issued - before.issued + after.claimed - before.claimed).to.equal(5);
    } finally {
      await receiver.close();
      await svc.stop();
    }
  });

  it("matches each event of a batch to every active subscription of its company taking its key, each with that subscription's URL, headers, auth and secrets", async function () {
    this.timeout(30_000);
    const svc = await h.webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    const receiver = await Receiver.start();
    try {
      const [companyId, otherId] = [await h.company(), await h.company()];
      const subscribe = async (company: string, path: string, body: Record<string, unknown>) => {
        const res = await h.admin(svc, 'POST', `/companies/${company}/webhooks`, { url: `${receiver.url}/${path}`, ...body });
        expect(res.status).to.equal(201);
        return res.body as { id: string; secret: string };
      };
      const created = await subscribe(companyId, 'created', {
        events: ['lead.created'],
        headers: { 'X-Tenant': 'a "b"' },
        auth: { type: 'bearer', token: 't0ken' },
      });
      const both = await subscribe(companyId, 'both', { events: ['lead.created', 'lead.updated'] });
      // Its previous secret is still valid: both sign the Standard Webhooks header.
      const rotated = await h.admin(svc, 'PATCH', `/companies/${companyId}/webhooks/${both.id}`, {
        rotate_secret: true,
        secret_rotation_grace_seconds: 3600,
      });
      expect(rotated.status).to.equal(200);
      await subscribe(companyId, 'updated', { events: ['lead.updated'] });
      const disabled = await subscribe(companyId, 'disabled', { events: ['lead.created'] });
      expect((await h.admin(svc, 'PATCH', `/companies/${companyId}/webhooks/${disabled.id}`, { active: false })).status).to.equal(200);
      const deleted = await subscribe(companyId, 'deleted', { events: ['lead.created'] });
      expect((await h.admin(svc, 'DELETE', `/companies/${companyId}/webhooks/${deleted.id}`)).status).to.equal(200);
      const other = await subscribe(otherId, 'other', { events: ['lead.created', 'lead.updated'] });
      const before = await started(svc);

      const ids = await h.publish(svc, companyId, [
        { key: 'lead.created', payload: { n: 0 } },
        { key: 'lead.updated', payload: { n: 1 } },
        { key: 'lead.created', payload: { n: 2 } },
      ]);
      const expected: Record<string, string[]> = {
        '/hook/created': [ids[0]!, ids[2]!],
        '/hook/both': ids,
        '/hook/updated': [ids[1]!],
      };
      await eventually(() => receiver.received.length === 6, 10_000);
      // None comes late to a subscription that should get nothing.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const byPath: Record<string, string[]> = {};
      for (const r of receiver.received) byPath[r.path] = [...(byPath[r.path] ?? []), r.body.event_id];
      expect(Object.fromEntries(Object.entries(byPath).map(([p, e]) => [p, e.sort()]))).to.deep.equal(
        Object.fromEntries(Object.entries(expected).map(([p, e]) => [p, [...e].sort()])),
      );
      for (const r of receiver.received.filter((r) => r.path === '/hook/created')) {
        expect(r.headers['x-tenant']).to.equal('a "b"');
        expect(r.headers.authorization).to.equal('Bearer t0ken');
        expect(verifyWebhook({ body: r.raw, headers: r.headers, secrets: [created.secret] }).event_id).to.equal(r.body.event_id);
      }
      for (const r of receiver.received.filter((r) => r.path === '/hook/both')) {
        expect(verifyWebhook({ body: r.raw, headers: r.headers, secrets: [rotated.body.secret] }).event_id).to.equal(r.body.event_id);
        expect(verifyWebhook({ body: r.raw, headers: r.headers, secrets: [both.secret] }).event_id).to.equal(r.body.event_id);
      }
      const after = await started(svc);
      expect(after.issued - before.issued).to.equal(6);
      expect(after.claimed - before.claimed).to.equal(0);

      // The log lists a subscription's deliveries newest first, so those of one batch come in reverse event order.
      const log = await h.admin(svc, 'GET', `/companies/${companyId}/webhooks/${both.id}/deliveries`);
      expect(log.body.records.map((d: { event_id: string }) => d.event_id)).to.deep.equal([...ids].reverse());
      for (const [company, sub] of [
        [companyId, disabled],
        [otherId, other],
      ] as const)
        expect((await h.admin(svc, 'GET', `/companies/${company}/webhooks/${sub.id}/deliveries`)).body.records).to.deep.equal([]);
    } finally {
      await receiver.close();
      await svc.stop();
    }
  });
});
