import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type pg from 'pg';
import type { client } from '../support/client.js';
import type { adminOf, Tenant } from '../support/fixtures.js';
import { adminCreator, expect400, outboxKeysOf, salesRoutes, seedSalesReferences } from '../support/sales.js';
import { openTenants } from '../support/session.js';
import type { Stack } from '../support/stack.js';

/** Deal external ids and POST /deals/batch (issue 22 items 1-3) through the gateway: the lead's rules on deals. */
describe('deal external ids and batches', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  const ref: Record<string, any> = {};
  const deals = salesRoutes(
    (...a) => call(...a),
    'deals',
    () => t,
  );
  const batch = (body: unknown, token = t.key.key) => call('POST', '/integrations/external/deals/batch', { token, body });
  const ok = async (body: unknown, token = t.key.key) => {
    const res = await batch(body, token);
    expect(res.status, res.text).to.equal(200);
    return res.body.results as any[];
  };
  const dealsOf = async (tenant: Tenant) =>
    (await db.query('select count(*)::int n from crm.deals where company_id = $1', [tenant.company.id])).rows[0].n as number;
  const ext = () => `erp-${randomUUID()}`;

  before(async () => {
    ({ stack, call, admin, db, t, other } = await openTenants());
    Object.assign(
      ref,
      await seedSalesReferences(
        adminCreator(admin, () => t),
        'deal',
        other,
      ),
    );
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('external_id: in the detail, the list and deal.created; ext: refs; 409 naming the holder; 404 for an unknown one', async () => {
    const id = ext();
    const deal = await deals.created({ title: 'ERP deal', external_id: id, value: 10 });
    const detail = await deals.detail(`ext:${id}`);
    expect(detail).to.include({ id: deal.id, external_id: id });
    expect((await deals.list('?take=50')).records.find((r) => r.id === deal.id)?.external_id).to.equal(id);
    const { rows } = await db.query(`select payload from crm.outbox where event_key = 'deal.created' and payload->'deal'->>'id' = $1`, [
      deal.id,
    ]);
    expect(rows[0].payload.deal.external_id).to.equal(id);
    const clash = await deals.create({ title: 'Again', external_id: id });
    expect(clash.status, clash.text).to.equal(409);
    expect(clash.body.message).to.contain(deal.id);
    expect((await deals.get(`ext:${ext()}`)).status).to.equal(404);
    expect((await deals.get(`ext:${id}`, other.key.key)).status).to.equal(404);
    expect400(await deals.create({ title: 'Long', external_id: 'y'.repeat(256) }), 'external_id');
  });

  it('batch: created, failed and upserted items with deal fields; unchanged writes no event', async () => {
    const id = ext();
    const before = await dealsOf(t);
    const results = await ok({
      mode: 'upsert',
      items: [
        { title: 'Upsert me', external_id: id, value: 100, tags: [ref.hot.id] },
        { title: 'Bad value', value: -1 },
        { title: 'Person', person: { name: 'Dora', contacts: [] } },
      ],
    });
    expect(results.map((r) => [r.index, r.status, r.action])).to.deep.equal([
      [0, 201, 'created'],
      [1, 400, 'failed'],
      [2, 201, 'created'],
    ]);
    expect(results[1].error.details.fields.map((f: any) => f.field)).to.deep.equal(['value']);
    expect(results[2].person.match).to.equal('created');
    expect(await dealsOf(t)).to.equal(before + 2);
    const [same] = await ok({ mode: 'upsert', items: [{ title: 'Upsert me', external_id: id, value: 100, tags: [ref.hot.id] }] });
    expect(same).to.include({ status: 200, id: results[0].id, action: 'unchanged' });
    expect(await outboxKeysOf(db, results[0].id)).to.deep.equal(['deal.created']);
    const [changed] = await ok({ mode: 'upsert', items: [{ title: 'Upsert me', external_id: id, value: 250, tags: [ref.cold.id] }] });
    expect(changed).to.include({ status: 200, action: 'updated' });
    expect(await outboxKeysOf(db, results[0].id)).to.deep.equal(['deal.created', 'deal.updated']);
    const detail = await deals.detail(results[0].id);
    expect(detail.value).to.equal(250);
    expect(detail.tags.map((x: any) => x.id)).to.deep.equal([ref.cold.id]);
    // In create mode the same external id is a 409 naming the deal.
    const [conflict] = await ok({ mode: 'create', items: [{ title: 'Dup', external_id: id }] });
    expect(conflict).to.include({ status: 409, action: 'failed' });
    expect(conflict.error.message).to.contain(results[0].id);
  });

  it('permissions: a key with crm/deal.create only cannot update through an upsert', async () => {
    const id = ext();
    const existing = await deals.created({ title: 'Kept', external_id: id });
    const res = await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/deal.create'] });
    const [denied] = await ok({ mode: 'upsert', items: [{ title: 'Changed', external_id: id }] }, res.body.key);
    expect(denied).to.include({ status: 403, action: 'failed' });
    expect((await deals.detail(existing.id)).title).to.equal('Kept');
    const lead = await admin('POST', `/companies/${t.company.id}/keys`, {
      created_by_user_id: t.user.id,
      permissions: ['crm/lead.create'],
    });
    expect((await batch({ items: [{ title: 'x' }] }, lead.body.key)).status).to.equal(403);
  });
});
