import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { type Stack, startStack } from '../support/stack.js';

describe('first end-to-end path: lead through the gateway, lead.created to a signed webhook', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>['call'];
  const received: { headers: http.IncomingHttpHeaders; raw: Buffer }[] = [];
  let receiver: http.Server;
  let receiverUrl: string;

  before(async () => {
    stack = await startStack();
    api = client(stack.gatewayUrl).call;
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, raw: Buffer.concat(chunks) });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    receiver?.close();
    await stack?.stop();
  });

  it('creates a lead, reads it back by id and code, and delivers lead.created signed', async () => {
    const admin = (method: string, path: string, body?: unknown) => api(method, `/admin/v1${path}`, { token: stack.adminToken, body });
    const company = (await admin('POST', '/companies', { name: 'Acme', master_user: { name: 'Master', email: 'm@acme.test' } })).body;
    const user = (await admin('POST', `/companies/${company.id}/users`, { name: 'Integrator', email: 'i@acme.test' })).body;
    const key = (await admin('POST', `/companies/${company.id}/keys`, { created_by_user_id: user.id, permissions: ['*'] })).body;
    const pipeline = (
      await admin('POST', `/companies/${company.id}/pipelines`, {
        name: 'Sales',
        is_primary: true,
        stages: [{ name: 'New' }, { name: 'Won' }],
      })
    ).body;
    const sub = await admin('POST', `/companies/${company.id}/webhooks`, { url: receiverUrl, events: ['lead.created'] });
    expect(sub.status, sub.text).to.equal(201);

    const created = await api('POST', '/integrations/external/leads', { token: key.key, body: { title: 'First lead' } });
    expect(created.status, created.text).to.equal(201);
    expect(Object.keys(created.body).sort()).to.deep.equal(['code', 'id', 'measurement_consent', 'title']);
    expect(created.body.measurement_consent).to.equal('GRANTED');
    expect(created.body.code).to.equal(1);

    for (const ref of [created.body.id, String(created.body.code)]) {
      const got = await api('GET', `/integrations/external/leads/${ref}`, { token: key.key });
      expect(got.status, got.text).to.equal(200);
      expect(got.body.id).to.equal(created.body.id);
      expect(got.body.stage.id).to.equal(pipeline.stages[0].id);
      expect(got.body.responsible.id).to.equal(user.id);
      expect(got.body.created_by.id).to.equal(user.id);
    }

    const delivery = await eventually(() => received[0], 15_000);
    const body = JSON.parse(delivery.raw.toString('utf8'));
    expect(body.event_key).to.equal('lead.created');
    expect(body.payload.lead).to.include({ id: created.body.id, code: 1, title: 'First lead', measurement_consent: 'GRANTED', status: 1 });
    expect(body.payload.lead.stage).to.deep.equal({ id: pipeline.stages[0].id, name: 'New', pipeline: { id: pipeline.id, name: 'Sales' } });
    expect(body.payload.lead.responsible.id).to.equal(user.id);
    expect(delivery.headers['x-svc-event-id']).to.equal(body.event_id);
    expect(delivery.headers['user-agent']).to.equal('svc-webhooks/1.0');
    const expected = `sha256=${createHmac('sha256', sub.body.secret).update(delivery.raw).digest('hex')}`;
    expect(delivery.headers['x-svc-signature']).to.equal(expected);
  });
});
