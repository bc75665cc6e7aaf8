import { expect } from 'chai';
import { client } from '../support/client.js';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { type Child, loggedPort, spawnEntry, waitReady } from '../support/processes.js';
import { type Stack, startStack } from '../support/stack.js';

describe('per-key rate limit in Redis, shared by two gateway processes', () => {
  let stack: Stack;
  const gateways: Child[] = [];
  const urls: string[] = [];
  let t: Tenant;

  before(async function () {
    this.timeout(90_000);
    stack = await startStack({ gateway: { RATE_LIMIT_PER_MINUTE: '25' } });
    for (let i = 0; i < 2; i++) {
      const child = spawnEntry('gateway/src/main.ts', { ...stack.gatewayEnv, PORT: '0', LOG_LEVEL: 'info' });
      gateways.push(child);
      urls.push(`http://127.0.0.1:${await loggedPort(child)}`);
      await waitReady(urls.at(-1)!);
    }
    t = await seedTenant(client(stack.gatewayUrl).call, stack.adminToken, { rate_limit_per_minute: 10 });
  });
  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await stack?.stop();
  });

  it('admits exactly the key limit across both processes, then 429 with Retry-After', async () => {
    const [a, b] = urls.map((u) => client(u).call);
    const results = [];
    for (let i = 0; i < 7; i++) {
      results.push(await a!('GET', '/integrations/external/leads/1', { token: t.key.key }));
      results.push(await b!('GET', '/integrations/external/leads/1', { token: t.key.key }));
    }
    const limited = results.filter((r) => r.status === 429);
    const admitted = results.filter((r) => r.status !== 429);
    expect(admitted).to.have.length(10);
    expect(limited).to.have.length(4);
    for (const r of admitted) expect(r.status).to.equal(404);
    expect(admitted.map((r) => Number(r.headers.get('ratelimit-remaining')))).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    for (const r of results) {
      expect(r.headers.get('ratelimit-limit')).to.equal('10');
      const reset = Number(r.headers.get('ratelimit-reset'));
      expect(reset).to.be.within(1, 60);
    }
    for (const r of limited) {
      expect(r.body).to.deep.include({ statusCode: 429, error: 'Too Many Requests' });
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
      expect(r.headers.get('ratelimit-remaining')).to.equal('0');
    }
  });

  it('applies the gateway default to a key without its own limit and counts keys apart', async () => {
    const admin = client(stack.gatewayUrl).call;
    const other = await admin('POST', `/admin/v1/companies/${t.company.id}/keys`, {
      token: stack.adminToken,
      body: { created_by_user_id: t.user.id, permissions: ['*'] },
    });
    const res = await client(urls[1]!).call('GET', '/integrations/external/leads/1', { token: other.body.key });
    expect(res.headers.get('ratelimit-limit')).to.equal('25');
    expect(res.headers.get('ratelimit-remaining')).to.equal('24');
  });

  it('a limited key is still limited on the in-process gateway sharing the Redis', async () => {
    const res = await client(stack.gatewayUrl).call('GET', '/integrations/external/leads/1', { token: t.key.key });
    expect(res.status).to.equal(429);
  });
});
