import { EVENT_KEYS, SPEC_EVENT_KEYS, WEBHOOK_EVENT_KEYS } from '@svc/platform/events/catalog';
import { eventually } from '@svc/platform/testing';
import { verifyWebhook } from '@svc/webhook-verify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { client } from '../support/client.js';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { type ReceivedRequest, startReceiver } from '../support/receiver.js';
import { type Stack, startStack } from '../support/stack.js';

/**
 * Subscriptions an integration manages with its own key (issue 21 items 1 and 2), through the gateway, with the real
 * webhooks service, NATS and loopback receivers.
 */
describe('webhooks under the integration key', function () {
  this.timeout(120_000);
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** Paths whose receiver answers 500 with a long body until taken out. */
  const down = new Set<string>();
  const LONG_ERROR = `upstream exploded: ${'x'.repeat(2000)}`;

  before(async () => {
    // Retries wait an hour: a failed attempt stays failed until the test itself asks for it again.
    stack = await startStack({ webhooks: { WEBHOOK_RETRY_BASE_MS: '3600000' } });
    call = client(stack.gatewayUrl).call;
    receiver = await startReceiver((r) => {
      const path = r.path;
      if (path.includes('/gone')) return 410;
      if (down.has(path)) return { status: 500, body: LONG_ERROR };
      return { status: 200, body: 'ok' };
    });
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  const api = (t: Tenant | string) => {
    const token = typeof t === 'string' ? t : t.key.key;
    return (method: string, path: string, body?: unknown) => call(method, `/integrations/external${path}`, { token, body });
  };
  const arrivedAt = (path: string) => receiver.received.filter((r) => r.path === path);
  const subscribe = async (t: Tenant, path: string, events: string[], extra: Record<string, unknown> = {}) => {
    const res = await api(t)('POST', '/webhooks', { url: receiver.url(path), events, ...extra });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const createLead = async (t: Tenant, title: string) => {
    const res = await api(t)('POST', '/leads', { title });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string };
  };

  it('a subscription made with an integration key receives a lead event, signed with the secret shown once', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const path = `/${t.company.id}/leads`;
    const sub = await subscribe(t, path, ['lead.created'], { description: 'CRM sync', headers: { 'X-Tenant': 'acme' } });
    expect(sub).to.include({ url: receiver.url(path), description: 'CRM sync', active: true, disabled_at: null });
    expect(sub.secret).to.be.a('string').with.length.above(15);
    expect(sub.standard_webhooks_secret).to.equal(`whsec_${Buffer.from(sub.secret).toString('base64')}`);
    const got = await api(t)('GET', `/webhooks/${sub.id}`);
    expect(got.status).to.equal(200);
    expect(got.body).to.not.have.any.keys('secret', 'standard_webhooks_secret');
    expect(got.body.headers).to.deep.equal({ 'X-Tenant': 'acme' });

    const lead = await createLead(t, 'Hello hooks');
    const delivery = await eventually(() => arrivedAt(path)[0]);
    expect(delivery.body.event_key).to.equal('lead.created');
    expect(delivery.headers['x-tenant']).to.equal('acme');
    const event = verifyWebhook({ body: delivery.raw, headers: delivery.headers as Record<string, string>, secrets: [sub.secret] });
    expect(event.payload).to.have.nested.property('lead.id', lead.id);
  });

  it('a test event goes through the real delivery path: signed (Standard Webhooks), marked, logged', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const path = `/${t.company.id}/test`;
    const sub = await subscribe(t, path, ['lead.created']);
    const sent = await api(t)('POST', `/webhooks/${sub.id}/test`, {});
    expect(sent.status, sent.text).to.equal(202);
    expect(sent.body).to.include({ event_key: 'webhook.test', status: 'pending' });
    const got = await eventually(() => arrivedAt(path).find((r) => r.body.event_key === 'webhook.test'));
    expect(got.headers['x-svc-test']).to.equal('true');
    // The official Standard Webhooks library, with the secret in its whsec_ form.
    const verified = new Webhook(sub.standard_webhooks_secret).verify(
      got.raw.toString('utf8'),
      got.headers as Record<string, string>,
    ) as any;
    expect(verified).to.deep.include({ event_id: sent.body.event_id, event_key: 'webhook.test' });
    expect(verified.payload).to.include({ test: true, webhook_id: sub.id });
    expect(() =>
      new Webhook(`whsec_${Buffer.from('another secret!!').toString('base64')}`).verify(got.raw.toString(), got.headers as any),
    ).to.throw();
    const log = await eventually(async () => {
      const res = await api(t)('GET', `/webhooks/${sub.id}/deliveries?event_key=webhook.test`);
      return res.body.records[0]?.status === 'succeeded' ? res.body : undefined;
    });
    expect(log.total).to.equal(1);
    expect(log.records[0].attempts).to.have.length(1);
    expect(log.records[0].attempts[0]).to.include({ status_code: 200, error: null, response_body: 'ok' });

    // One of the subscription's keys: a sample of the company's latest event of that key, marked as a test.
    const noSample = await api(t)('POST', `/webhooks/${sub.id}/test`, { event_key: 'lead.created' });
    expect(noSample.status).to.equal(400);
    expect(noSample.body.message).to.match(/^event_key: /);
    const lead = await createLead(t, 'Sampled');
    await eventually(() => arrivedAt(path).find((r) => r.body.event_key === 'lead.created'));
    const sample = await api(t)('POST', `/webhooks/${sub.id}/test`, { event_key: 'lead.created' });
    expect(sample.status, sample.text).to.equal(202);
    const sampled = await eventually(() => arrivedAt(path).find((r) => r.body.event_id === sample.body.event_id));
    expect(sampled.headers['x-svc-test']).to.equal('true');
    expect(sampled.body.payload.lead.id).to.equal(lead.id);
    const notSubscribed = await api(t)('POST', `/webhooks/${sub.id}/test`, { event_key: 'deal.created' });
    expect(notSubscribed.status).to.equal(400);
    expect(notSubscribed.body.details.fields[0].field).to.equal('event_key');
  });

  it('a 500-answering receiver: each failure in the log with the response snippet; one replay delivers them all', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const path = `/${t.company.id}/flaky`;
    down.add(path);
    const since = new Date(Date.now() - 1000).toISOString();
    const sub = await subscribe(t, path, ['lead.created']);
    const leads = [await createLead(t, 'One'), await createLead(t, 'Two'), await createLead(t, 'Three')];
    const failing = await eventually(async () => {
      const res = await api(t)('GET', `/webhooks/${sub.id}/deliveries`);
      return res.body.records.length === 3 && res.body.records.every((d: any) => d.attempts.length === 1) ? res.body : undefined;
    });
    for (const d of failing.records) {
      expect(d.status).to.equal('pending');
      expect(d.next_attempt_at).to.be.a('string');
      expect(d.attempts[0]).to.include({ status_code: 500, error: 'HTTP 500' });
      expect(d.attempts[0].response_body).to.equal(LONG_ERROR.slice(0, 1024));
    }
    expect(arrivedAt(path)).to.have.length(3);

    down.delete(path);
    const replay = await api(t)('POST', `/webhooks/${sub.id}/replay`, { since });
    expect(replay.status, replay.text).to.equal(202);
    expect(replay.body).to.deep.equal({ queued: 3 });
    const done = await eventually(async () => {
      const res = await api(t)('GET', `/webhooks/${sub.id}/deliveries?status=succeeded`);
      return res.body.total === 3 ? res.body : undefined;
    });
    const got = arrivedAt(path);
    expect(got).to.have.length(6);
    // The same event ids, each sent once more.
    const ids = failing.records.map((d: any) => d.event_id).sort();
    expect(
      got
        .slice(3)
        .map((r) => r.body.event_id)
        .sort(),
    ).to.deep.equal(ids);
    expect(
      got
        .slice(3)
        .map((r) => r.body.payload.lead.id)
        .sort(),
    ).to.deep.equal(leads.map((l) => l.id).sort());
    for (const d of done.records) expect(d.attempts.map((a: any) => a.status_code)).to.deep.equal([500, 200]);

    // Only the failed ones: none is left, so nothing is queued.
    const again = await api(t)('POST', `/webhooks/${sub.id}/replay`, { since, status: 'failed' });
    expect(again.body).to.deep.equal({ queued: 0 });
    // One delivery by its id.
    const one = await api(t)('POST', `/webhooks/${sub.id}/deliveries/${done.records[0].id}/redeliver`);
    expect(one.status, one.text).to.equal(202);
    await eventually(() => arrivedAt(path).length === 7 || undefined);
    expect(arrivedAt(path)[6]!.body.event_id).to.equal(done.records[0].event_id);
  });

  it('the delivery log filters by status, event key and time, and pages with a cursor', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const path = `/${t.company.id}/log`;
    const sub = await subscribe(t, path, ['lead.created']);
    for (const title of ['a', 'b', 'c']) await createLead(t, title);
    await eventually(() => arrivedAt(path).length === 3 || undefined);
    const first = await api(t)('GET', `/webhooks/${sub.id}/deliveries?take=2`);
    expect(first.body.total).to.equal(3);
    expect(first.body.records).to.have.length(2);
    const second = await api(t)('GET', `/webhooks/${sub.id}/deliveries?take=2&cursor=${first.body.next_cursor}`);
    expect(second.body.records).to.have.length(1);
    expect(second.body.next_cursor).to.equal(null);
    const all = [...first.body.records, ...second.body.records].map((d: any) => d.id);
    expect(new Set(all).size).to.equal(3);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await api(t)('GET', `/webhooks/${sub.id}/deliveries?since=${encodeURIComponent(future)}`)).body.total).to.equal(0);
    expect((await api(t)('GET', `/webhooks/${sub.id}/deliveries?until=${encodeURIComponent(future)}`)).body.total).to.equal(3);
    expect((await api(t)('GET', `/webhooks/${sub.id}/deliveries?status=failed`)).body.total).to.equal(0);
    expect((await api(t)('GET', `/webhooks/${sub.id}/deliveries?event_key=deal.won`)).body.total).to.equal(0);
    const bad = await api(t)('GET', `/webhooks/${sub.id}/deliveries?since=yesterday`);
    expect(bad.status).to.equal(400);
    expect(bad.body.details.fields.map((f: any) => f.field)).to.deep.equal(['since']);
    const garbage = await api(t)('GET', `/webhooks/${sub.id}/deliveries?cursor=not-a-cursor`);
    expect(garbage.status).to.equal(400);
    expect(garbage.body.details.fields.map((f: any) => f.field)).to.deep.equal(['cursor']);
    const backwards = await api(t)('GET', `/webhooks/${sub.id}/deliveries?since=${encodeURIComponent(future)}&until=2020-01-01T00:00:00Z`);
    expect(backwards.status).to.equal(400);
    expect(backwards.body.details.fields.map((f: any) => f.field)).to.deep.equal(['until']);
  });

  it('a 410 Gone disables the subscription at once and fires webhook.disabled to the others that asked for it', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const gone = await subscribe(t, `/${t.company.id}/gone`, ['lead.created'], { description: 'old endpoint' });
    const watcherPath = `/${t.company.id}/watch`;
    await subscribe(t, watcherPath, ['webhook.disabled']);
    const deafPath = `/${t.company.id}/deaf`;
    await subscribe(t, deafPath, ['lead.updated']);
    // Subscriptions are matched when the webhooks service takes the event, so the test waits for a witness's copy of
    // an event before it changes the subscription: its matching is then over (decision 0232).
    const witnessPath = `/${t.company.id}/witness`;
    await subscribe(t, witnessPath, ['lead.created']);
    const witnessed = (title: string) => eventually(() => arrivedAt(witnessPath).find((r) => r.body.payload.lead.title === title));
    await createLead(t, 'Goes nowhere');
    const notice = await eventually(() => arrivedAt(watcherPath).find((r) => r.body.event_key === 'webhook.disabled'));
    expect(notice.body.payload).to.deep.include({ webhook: { id: gone.id, url: gone.url, description: 'old endpoint' }, reason: 'gone' });
    const after = await api(t)('GET', `/webhooks/${gone.id}`);
    expect(after.body.active).to.equal(false);
    expect(after.body.disabled_reason).to.match(/410 Gone/);
    expect(after.body.disabled_at).to.equal(notice.body.payload.disabled_at);
    expect(arrivedAt(`/${t.company.id}/gone`)).to.have.length(1);
    // Nothing more goes to the disabled one; re-enabling it starts again.
    await createLead(t, 'Not sent');
    await witnessed('Not sent');
    const enabled = await api(t)('PATCH', `/webhooks/${gone.id}`, { active: true, url: receiver.url(`/${t.company.id}/back`) });
    expect(enabled.body).to.include({ active: true, disabled_at: null, disabled_reason: null });
    await createLead(t, 'Sent again');
    const back = await eventually(() => arrivedAt(`/${t.company.id}/back`)[0]);
    expect(back.body.payload.lead.title).to.equal('Sent again');
    expect(arrivedAt(`/${t.company.id}/gone`)).to.have.length(1);
    expect(arrivedAt(deafPath)).to.have.length(0);
  });

  it('rotate-secret: a new secret shown once; the old one keeps signing through the grace period', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const path = `/${t.company.id}/rotate`;
    const sub = await subscribe(t, path, ['lead.created']);
    const rotated = await api(t)('POST', `/webhooks/${sub.id}/rotate-secret`, { secret_rotation_grace_seconds: 600 });
    expect(rotated.status, rotated.text).to.equal(200);
    expect(rotated.body.secret).to.be.a('string').and.not.equal(sub.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at)).to.be.above(Date.now());
    await api(t)('POST', `/webhooks/${sub.id}/test`);
    const got = await eventually(() => arrivedAt(path)[0]);
    for (const secret of [sub.secret, rotated.body.secret])
      expect(verifyWebhook({ body: got.raw, headers: got.headers as Record<string, string>, secrets: [secret] }).event_key).to.equal(
        'webhook.test',
      );
  });

  it('lists, changes and removes subscriptions of the key’s company only; another company’s is a 404', async () => {
    const a = await seedTenant(call, stack.adminToken);
    const b = await seedTenant(call, stack.adminToken);
    const subs = [];
    for (const n of [1, 2, 3]) subs.push(await subscribe(a, `/${a.company.id}/list${n}`, ['lead.created']));
    const page1 = await api(a)('GET', '/webhooks?take=2');
    expect(page1.body.total).to.equal(3);
    const page2 = await api(a)('GET', `/webhooks?take=2&cursor=${page1.body.next_cursor}`);
    expect([...page1.body.records, ...page2.body.records].map((s: any) => s.id)).to.deep.equal(subs.map((s) => s.id));
    expect(page2.body.next_cursor).to.equal(null);
    expect((await api(a)('GET', '/webhooks?skip=2')).body.records.map((s: any) => s.id)).to.deep.equal([subs[2].id]);

    const theirs = subs[0].id;
    expect((await api(b)('GET', '/webhooks')).body.total).to.equal(0);
    for (const [method, path, body] of [
      ['GET', `/webhooks/${theirs}`],
      ['PATCH', `/webhooks/${theirs}`, { description: 'mine now' }],
      ['DELETE', `/webhooks/${theirs}`],
      ['POST', `/webhooks/${theirs}/rotate-secret`, {}],
      ['POST', `/webhooks/${theirs}/test`, {}],
      ['GET', `/webhooks/${theirs}/deliveries`],
      ['POST', `/webhooks/${theirs}/replay`, { since: new Date(0).toISOString() }],
    ] as const) {
      const res = await api(b)(method, path, body);
      expect(res.status, `${method} ${path}`).to.equal(404);
    }
    expect((await api(a)('GET', `/webhooks/${theirs}`)).body.description).to.equal(null);

    const patched = await api(a)('PATCH', `/webhooks/${theirs}`, { events: ['lead.updated', 'webhook.disabled'], description: 'two' });
    expect(patched.body).to.include({ description: 'two' });
    expect(patched.body.events).to.deep.equal(['lead.updated', 'webhook.disabled']);
    expect((await api(a)('DELETE', `/webhooks/${theirs}`)).body).to.deep.equal({ id: theirs });
    expect((await api(a)('GET', `/webhooks/${theirs}`)).status).to.equal(404);
    expect((await api(a)('GET', '/webhooks')).body.total).to.equal(2);
  });

  it('refuses bad input with a 400 naming the field, writing nothing; an SSRF URL is refused', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const cases: [unknown, string][] = [
      [{ events: ['lead.created'] }, 'url'],
      [{ url: 'ftp://example.com/hook', events: ['lead.created'] }, 'url'],
      [{ url: 'http://169.254.169.254/latest/meta-data', events: ['lead.created'] }, 'url'],
      [{ url: 'https://example.com/hook', events: ['lead.nope'] }, 'events.0'],
      [{ url: 'https://example.com/hook', events: [] }, 'events'],
      [{ url: 'https://example.com/hook', events: ['lead.created'], headers: { Host: 'evil' } }, 'headers.Host'],
      [{ url: 'https://example.com/hook', events: ['lead.created'], headers: { 'X-A': 'a\r\nb' } }, 'headers.X-A'],
    ];
    for (const [body, field] of cases) {
      const res = await api(t)('POST', '/webhooks', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(
        res.body.details.fields.map((f: any) => f.field),
        JSON.stringify(body),
      ).to.include(field);
      expect(res.body.message).to.contain(`${field}: `);
    }
    // Operator settings of the admin API are not the subscriber's.
    const operatorOnly = await api(t)('POST', '/webhooks', { url: 'https://example.com/hook', events: ['lead.created'], max_retries: 0 });
    expect(operatorOnly.status).to.equal(400);
    expect(operatorOnly.body.message).to.contain('max_retries');
    expect((await api(t)('GET', '/webhooks')).body.total).to.equal(0);
    const sub = await subscribe(t, `/${t.company.id}/valid`, ['lead.created']);
    const ssrf = await api(t)('PATCH', `/webhooks/${sub.id}`, { url: 'http://[fd00:ec2::254]/' });
    expect(ssrf.status).to.equal(400);
    expect(ssrf.body.details.fields[0].field).to.equal('url');
    expect((await api(t)('GET', `/webhooks/${sub.id}`)).body.url).to.equal(sub.url);
    const replay = await api(t)('POST', `/webhooks/${sub.id}/replay`, { until: new Date().toISOString() });
    expect(replay.status).to.equal(400);
    expect(replay.body.details.fields[0].field).to.equal('since');
  });

  it('permissions: crm/webhooks.read to read, crm/webhooks.write to change, 403 without', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const sub = await subscribe(t, `/${t.company.id}/perm`, ['lead.created']);
    const keyWith = async (permissions: string[]) =>
      (
        await call('POST', `/admin/v1/companies/${t.company.id}/keys`, {
          token: stack.adminToken,
          body: { created_by_user_id: t.user.id, permissions },
        })
      ).body.key as string;
    const none = await keyWith(['crm/lead.read']);
    const reader = await keyWith(['crm/webhooks.read']);
    const writer = await keyWith(['crm/webhooks.write']);
    for (const path of ['/webhooks', `/webhooks/${sub.id}`, `/webhooks/${sub.id}/deliveries`, '/webhooks/event-types']) {
      expect((await api(none)('GET', path)).status, path).to.equal(403);
      expect((await api(reader)('GET', path)).status, path).to.equal(200);
    }
    for (const [method, path, body] of [
      ['POST', '/webhooks', { url: receiver.url('/x'), events: ['lead.created'] }],
      ['PATCH', `/webhooks/${sub.id}`, { description: 'x' }],
      ['POST', `/webhooks/${sub.id}/rotate-secret`, {}],
      ['POST', `/webhooks/${sub.id}/test`, {}],
      ['POST', `/webhooks/${sub.id}/replay`, { since: new Date().toISOString() }],
      ['DELETE', `/webhooks/${sub.id}`],
    ] as const) {
      const refused = await api(reader)(method, path, body);
      expect(refused.status, `${method} ${path}`).to.equal(403);
      expect(refused.body.message).to.contain('crm/webhooks.write');
    }
    expect((await api(writer)('PATCH', `/webhooks/${sub.id}`, { description: 'by the writer' })).status).to.equal(200);
    expect((await api(writer)('GET', `/webhooks/${sub.id}`)).status).to.equal(403);
  });

  it('the OpenAPI document has the operations with their permissions and the two new events, one Webhooks tag', async () => {
    const doc = (await (await fetch(`${stack.gatewayUrl}/integrations/external/openapi.json`)).json()) as any;
    const op = (path: string, method: string) => doc.paths[path]?.[method];
    const expected: [string, string, string][] = [
      ['/webhooks', 'post', 'crm/webhooks.write'],
      ['/webhooks', 'get', 'crm/webhooks.read'],
      ['/webhooks/event-types', 'get', 'crm/webhooks.read'],
      ['/webhooks/{id}', 'get', 'crm/webhooks.read'],
      ['/webhooks/{id}', 'patch', 'crm/webhooks.write'],
      ['/webhooks/{id}', 'delete', 'crm/webhooks.write'],
      ['/webhooks/{id}/rotate-secret', 'post', 'crm/webhooks.write'],
      ['/webhooks/{id}/test', 'post', 'crm/webhooks.write'],
      ['/webhooks/{id}/deliveries', 'get', 'crm/webhooks.read'],
      ['/webhooks/{id}/deliveries/{delivery_id}/redeliver', 'post', 'crm/webhooks.write'],
      ['/webhooks/{id}/replay', 'post', 'crm/webhooks.write'],
    ];
    for (const [path, method, permission] of expected) expect(op(path, method)?.['x-permission'], `${method} ${path}`).to.equal(permission);
    expect(doc.webhooks).to.include.keys('webhook.test', 'webhook.disabled');
    const names = doc.tags.map((t: any) => t.name);
    expect(new Set(names).size).to.equal(names.length);
  });

  it('event-types: every catalog key, the spec’s 33 and the webhook ones, with a payload schema a real delivery fits', async () => {
    expect(SPEC_EVENT_KEYS).to.have.length(33);
    expect([...WEBHOOK_EVENT_KEYS]).to.deep.equal(['webhook.test', 'webhook.disabled']);
    const t = await seedTenant(call, stack.adminToken);
    const res = await api(t)('GET', '/webhooks/event-types');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.records.map((r: any) => r.event_key)).to.have.members([...EVENT_KEYS]);
    expect(res.body.total).to.equal(EVENT_KEYS.length);
    for (const r of res.body.records) expect(r.description, r.event_key).to.be.a('string').that.is.not.empty;
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    const schemaOf = (key: string) => res.body.records.find((r: any) => r.event_key === key).schema;
    const path = `/${t.company.id}/typed`;
    await subscribe(t, path, ['lead.created']);
    await createLead(t, 'Typed');
    const got: ReceivedRequest = await eventually(() => arrivedAt(path)[0]);
    const validate = ajv.compile(schemaOf('lead.created'));
    expect(validate(got.body.payload), JSON.stringify(validate.errors)).to.equal(true);
    expect(validate({ lead: { id: 42 } })).to.equal(false);
    expect(ajv.compile(schemaOf('webhook.test'))({ test: true, webhook_id: 'x', message: 'm', sent_at: 'now' })).to.equal(true);
  });
});
