import { nativePool } from '@svc/platform/db/native';
import { expect } from 'chai';
import type { Pool } from 'pg';
import { client } from '../support/client.js';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

/** Decision 0010 kept with issue 3's richer leads: the statements crm sends for the hot paths. */
describe('lead hot paths stay a few named statements', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let t: Tenant;
  let pool: Pool;
  const sent: string[] = [];

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    t = await seedTenant(call, stack.adminToken);
    pool = await nativePool(stack.services.crm.ctx.orm);
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as { name?: string } | string;
      sent.push(typeof first === 'string' ? first : (first.name ?? 'unnamed'));
      return query(...args);
    };
  });
  after(() => stack?.stop());

  const during = async (work: () => Promise<unknown>) => {
    sent.length = 0;
    await work();
    // The view folder (decision 0012) runs on its own timer, not for the request.
    return sent.filter((name) => name !== 'crm_lead_fold_views');
  };

  it('a title-only POST is one read and one write statement on the pool, outside any transaction', async () => {
    await call('GET', '/integrations/external/leads/1', { token: t.key.key });
    // A statement run through pool.query is autocommit: a transaction would run on a client of pool.connect().
    const names = await during(async () => {
      const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Hot' } });
      expect(res.status, res.text).to.equal(201);
    });
    expect(names).to.deep.equal(['crm_lead_create_reads', 'crm_lead_create']);
  });

  it('GET /leads/{id} is one statement', async () => {
    const lead = (await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Read' } })).body;
    const names = await during(async () => {
      const res = await call('GET', `/integrations/external/leads/${lead.id}`, { token: t.key.key });
      expect(res.status, res.text).to.equal(200);
    });
    expect(names).to.deep.equal(['crm_lead_detail_by_id']);
  });
});
