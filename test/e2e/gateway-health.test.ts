import { expect } from 'chai';
import { client } from '../support/client.js';
import { seedTenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

describe('gateway health, readiness and metrics', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ processes: ['files'] });
  });
  after(() => stack?.stop());

  it('answers /healthz without credentials', async () => {
    const res = await fetch(`${stack.gatewayUrl}/healthz`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ status: 'ok' });
  });

  it('is ready when Redis and every service are, naming each check', async () => {
    const res = await fetch(`${stack.gatewayUrl}/readyz`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({
      status: 'ready',
      checks: { redis: 'ok', crm: 'ok', tasks: 'ok', chat: 'ok', files: 'ok', webhooks: 'ok' },
    });
  });

  it('is not ready while a service is down, and ready again when it is back', async () => {
    await stack.processes.files!.child.stop('SIGKILL');
    const down = await fetch(`${stack.gatewayUrl}/readyz`);
    expect(down.status).to.equal(503);
    const body = (await down.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).to.equal('not ready');
    expect(body.checks.files).to.not.equal('ok');
    expect(body.checks.crm).to.equal('ok');
    await stack.processes.files!.restart();
    expect((await fetch(`${stack.gatewayUrl}/readyz`)).status).to.equal(200);
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
