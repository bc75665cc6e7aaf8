import { randomUUID } from 'node:crypto';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { type CallResult, client } from '../support/client.js';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

/**
 * An idempotency key is settled in its lead's transaction (issue 23 item 7): while the creation runs, its attempt
 * is declared dead (here by age, as a lost liveness session or a crash would), and a replay comes. The key must
 * never end `failed` while its lead exists, which would send the client to a new key and a duplicate lead.
 */
describe('fault: an attempt declared dead while its lead commits never leaves the key failed', () => {
  let stack: Stack | undefined;
  let db: pg.Client | undefined;
  let blocker: pg.Client | undefined;
  let aging: pg.Client | undefined;

  after(async () => {
    for (const c of [blocker, aging, db]) await c?.end().catch(() => undefined);
    await stack?.stop();
  });

  it('rolls the creation back when a replay declared its attempt dead first: the key failed, no lead under it', async function () {
    this.timeout(120_000);
    stack = await startStack();
    const call = client(stack.gatewayUrl).call;
    const t: Tenant = await seedTenant(call, stack.adminToken, { rate_limit_per_minute: 1_000_000 });
    const key = `settle-${randomUUID()}`;
    const post = (): Promise<CallResult> =>
      call('POST', '/integrations/external/leads', {
        token: t.key.key,
        body: { title: `Settle ${key}` },
        headers: { 'x-idempotency-key': key },
      });
    const connect = async () => {
      const c = new pg.Client({ connectionString: stack!.env.DATABASE_URL });
      await c.connect();
      return c;
    };
    [db, blocker, aging] = await Promise.all([connect(), connect(), connect()]);
    const keyStatus = async () =>
      (await db!.query(`select status from crm.lead_idempotency_keys where company_id = $1 and key = $2`, [t.company.id, key])).rows[0]
        ?.status as string | undefined;

    // The creation waits on the company's lead sequence (its row exists once a lead was made), which the test holds.
    expect((await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'First' } })).status).to.equal(201);
    await blocker.query('begin');
    await blocker.query(`select 1 from crm.company_sequences where company_id = $1 and entity = 'lead' for update`, [t.company.id]);
    const first = post();
    await eventually(async () => (await keyStatus()) === 'processing', 30_000);
    // The attempt now looks dead to a replay: older than any creation lives.
    // Committed before the replay looks: a replay that still saw it alive would answer "still processing".
    await aging.query(`update crm.lead_idempotency_keys set created_at = now() - interval '1 hour' where company_id = $1 and key = $2`, [
      t.company.id,
      key,
    ]);
    const replay = await post();
    await blocker.query('rollback');
    const created = await first;

    // The replay found the attempt dead and consumed the key: the creation must then not commit its lead.
    expect(replay.status, replay.text).to.equal(409);
    expect(replay.body.message).to.contain('failed after starting');
    expect(created.status, created.text).to.equal(409);
    expect(created.body.message).to.contain('failed after starting');
    expect(await keyStatus()).to.equal('failed');
    const leads = async () =>
      (await db!.query(`select count(*)::int as n from crm.leads where company_id = $1 and title = $2`, [t.company.id, `Settle ${key}`]))
        .rows[0].n as number;
    expect(await leads()).to.equal(0);
    expect((await post()).status).to.equal(409);
    // The client's retry with a new key creates the lead once.
    const fresh = await call('POST', '/integrations/external/leads', {
      token: t.key.key,
      body: { title: `Settle ${key}` },
      headers: { 'x-idempotency-key': `fresh-${randomUUID()}` },
    });
    expect(fresh.status, fresh.text).to.equal(201);
    expect(await leads()).to.equal(1);
  });
});
