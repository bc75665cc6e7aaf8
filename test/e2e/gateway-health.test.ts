import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { seedTenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

describe('gateway health, readiness and metrics', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ processes: ['files', 'chat'] });
  });
  after(() => stack?.stop());

  it('answers /healthz without credentials', async () => {
    const res = await fetch(`${stack.gatewayUrl}/healthz`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ status: 'ok' });
  });

  it('is ready once configured and listening, and says what it knows of each service and of Redis', async () => {
    const res = await fetch(`${stack.gatewayUrl}/readyz`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({
      status: 'ready',
      upstreams: { crm: 'up', tasks: 'up', chat: 'up', files: 'up', webhooks: 'up' },
      redis: 'ok',
    });
  });

  it('with chat stopped: chat routes answer 503 with Retry-After at once, leads 2xx, the gateway and crm stay ready', async () => {
    const key = await seedKey();
    const auth = { authorization: `Bearer ${key}` };
    await stack.processes.chat!.child.stop('SIGKILL');
    const first = await fetch(`${stack.gatewayUrl}/integrations/external/chats`, { headers: auth });
    expect(first.status).to.equal(503);
    expect(await first.json()).to.deep.equal({ statusCode: 503, message: 'The chat service is unavailable', error: 'Service Unavailable' });
    expect(Number(first.headers.get('retry-after'))).to.be.at.least(1);
    // Known to be down: answered without a connection attempt, as the gauge operators watch says.
    const metrics = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    expect(metrics).to.match(/gateway_upstream_up\{[^}]*upstream="chat"[^}]*\} 0/);
    const again = await fetch(`${stack.gatewayUrl}/integrations/external/chats/unread-summary`, { headers: auth });
    expect(again.status).to.equal(503);
    expect(again.headers.get('retry-after')).to.equal(first.headers.get('retry-after'));
    const lead = await fetch(`${stack.gatewayUrl}/integrations/external/leads`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'While chat is down' }),
    });
    expect(lead.status, await lead.clone().text()).to.equal(201);
    expect((await fetch(`${stack.gatewayUrl}/integrations/external/tasks`, { headers: auth })).status).to.equal(200);
    const ready = await fetch(`${stack.gatewayUrl}/readyz`);
    expect(ready.status).to.equal(200);
    expect(((await ready.json()) as { upstreams: Record<string, string> }).upstreams).to.include({ chat: 'down', crm: 'up' });
    expect((await fetch(`${stack.services.crm.httpUrl}/readyz`)).status).to.equal(200);
    await stack.processes.chat!.restart();
    await eventually(
      async () => (await fetch(`${stack.gatewayUrl}/integrations/external/chats`, { headers: auth })).status === 200,
      15_000,
    );
    expect(await (await fetch(`${stack.gatewayUrl}/metrics`)).text()).to.match(/gateway_upstream_up\{[^}]*upstream="chat"[^}]*\} 1/);
  });

  it('answers a request to a service that is down with 503 and the spec error body', async () => {
    await stack.processes.files!.child.stop('SIGKILL');
    const key = await seedKey();
    const res = await fetch(`${stack.gatewayUrl}/integrations/external/files/x`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).to.equal(503);
    expect(await res.json()).to.deep.equal({ statusCode: 503, message: 'The files service is unavailable', error: 'Service Unavailable' });
    await stack.processes.files!.restart();
  });

  it('exposes Prometheus metrics', async () => {
    const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    expect(text).to.contain('http_request_duration_seconds').and.contain('service="gateway"');
  });

  const seedKey = async () => (await seedTenant(client(stack.gatewayUrl).call, stack.adminToken)).key.key as string;
});
