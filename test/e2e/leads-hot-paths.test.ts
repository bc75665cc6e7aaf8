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

  it('GET /leads/{id} is one statement: the whole detail the first time, then the check of the cached one (0015)', async () => {
    const lead = (await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Read' } })).body;
    const get = async () => {
      const res = await call('GET', `/integrations/external/leads/${lead.id}`, { token: t.key.key });
      expect(res.status, res.text).to.equal(200);
      return res.body;
    };
    expect(await during(get)).to.deep.equal(['crm_lead_detail_by_id']);
    expect(await during(get)).to.deep.equal(['crm_lead_detail_check']);
    const put = await call('PUT', `/integrations/external/leads/${lead.id}`, { token: t.key.key, body: { title: 'Read again' } });
    expect(put.status, put.text).to.equal(200);
    // Changed since it was cached: checked, then read again without a second view.
    let body: any;
    expect(await during(async () => (body = await get()))).to.deep.equal(['crm_lead_detail_check', 'crm_lead_detail_of']);
    expect(body.title).to.equal('Read again');
    expect(body.views_count).to.equal(3);
  });

  it('concurrent GETs of one lead share check statements, and every view counts once', async () => {
    const lead = (await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Burst' } })).body;
    await call('GET', `/integrations/external/leads/${lead.id}`, { token: t.key.key });
    let answers: any[] = [];
    const names = await during(async () => {
      answers = await Promise.all(
        Array.from({ length: 30 }, () => call('GET', `/integrations/external/leads/${lead.id}`, { token: t.key.key })),
      );
    });
    expect(answers.map((a) => a.status)).to.deep.equal(Array(30).fill(200));
    // One statement per lead at a time: the reads that arrive while one runs go together in the next.
    expect(names.filter((n) => n !== 'crm_lead_detail_check')).to.deep.equal([]);
    expect(names.length).to.be.within(1, 29);
    // Each read counts the views before it and its own, as if they had run one by one.
    expect(answers.map((a) => a.body.views_count).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 30 }, (_, i) => i + 2));
  });
  it('a GET waits on no lock of the lead: it answers while another transaction holds the lead row (0226)', async () => {
    const lead = (await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Locked' } })).body;
    const holder = await pool.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from crm.leads where id = $1 for update', [lead.id]);
      const get = () =>
        Promise.race([
          call('GET', `/integrations/external/leads/${lead.id}`, { token: t.key.key }),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the GET waited on the lead row')), 3000)),
        ]);
      // The first read (the whole detail) and the check of the cached one.
      expect((await get()).body.views_count).to.equal(1);
      expect((await get()).body.views_count).to.equal(2);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
  });

  it('concurrent title-only POSTs of one company share creation statements, with consecutive codes and each its own event (0225)', async () => {
    const taken = `erp-${Date.now()}`;
    expect(
      (await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Holder', external_id: taken } })).status,
    ).to.equal(201);
    const [{ last }] = (await pool.query('select max(code)::int as last from crm.leads where company_id = $1', [t.company.id])).rows;
    let answers: any[] = [];
    const names = await during(async () => {
      answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call('POST', '/integrations/external/leads', {
            token: t.key.key,
            // One of them names an external id already taken: it fails alone, the others are created.
            body: i === 7 ? { title: 'Taken', external_id: taken } : { title: `Burst ${i}` },
          }),
        ),
      );
    });
    expect(answers.map((a) => a.status)).to.deep.equal(Array.from({ length: 30 }, (_, i) => (i === 7 ? 409 : 201)));
    const created = answers.filter((a) => a.status === 201).map((a) => a.body);
    // No gap and no code twice: the 29 leads took the 29 codes after the last one.
    expect(created.map((c) => c.code).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 29 }, (_, i) => last + 1 + i));
    // The batch that held the taken external id failed whole and was sent again one by one; the 409 names the holder.
    expect(names.filter((n) => !['crm_lead_create_reads', 'crm_lead_create', 'crm_lead_id_of_external'].includes(n))).to.deep.equal([]);
    const events = await pool.query<{ id: string; code: number }>(
      `select (payload->'lead'->>'id') as id, (payload->'lead'->>'code')::int as code from crm.outbox
       where event_key = 'lead.created' and payload->'lead'->>'id' = any($1::text[])`,
      [created.map((c) => c.id)],
    );
    expect(new Map(events.rows.map((e) => [e.id, e.code]))).to.deep.equal(new Map(created.map((c) => [c.id, c.code])));
    // Without a failure, creations waiting together are one statement.
    let more: any[] = [];
    const plain = await during(async () => {
      more = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: `More ${i}` } }),
        ),
      );
    });
    expect(more.map((a) => a.status)).to.deep.equal(Array(20).fill(201));
    expect(more.map((a) => a.body.code).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 20 }, (_, i) => last + 30 + i));
    expect(plain.filter((n) => n === 'crm_lead_create').length).to.be.within(1, 19);
  });
});
