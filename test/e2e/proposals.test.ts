import { expect } from 'chai';
import type pg from 'pg';
import type { client } from '../support/client.js';
import { type adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { expect400, salesRoutes } from '../support/sales.js';
import { openTenants } from '../support/session.js';
import type { Stack } from '../support/stack.js';

/** The spec's "Proposal summary", the fields of every item of a lead's or deal's `proposals`. */
const SUMMARY_FIELDS = [
  'id',
  'code',
  'version',
  'title',
  'status',
  'is_primary',
  'discount_type',
  'discount_value',
  'subtotal',
  'total',
  'valid_until',
  'created_at',
  'updated_at',
  'approved_at',
  'archived_at',
  'rejected_at',
  'created_by',
  'approved_by',
];

/** Proposals of leads and deals through the gateway (decision 0078): CRUD, prices, primary, status, archive, details. */
describe('proposals: /integrations/external/proposals', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  let leads: ReturnType<typeof salesRoutes>;
  let deals: ReturnType<typeof salesRoutes>;
  let lead: { id: string };
  const P = '/integrations/external/proposals';
  const post = (body: unknown, token = t.key.key) => call('POST', P, { token, body });
  const created = async (body: Record<string, unknown>, token?: string) => {
    const res = await post(body, token);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const put = (id: string, body: unknown, token = t.key.key) => call('PUT', `${P}/${id}`, { token, body });
  const rows = async () => (await db.query('select count(*)::int as n from crm.proposals')).rows[0].n as number;
  const items = [
    { name: 'Licence', quantity: 3, unit_price: 19.99 },
    { name: 'Setup', description: 'One afternoon', quantity: 1.5, unit_price: 10 },
  ];

  before(async () => {
    ({ stack, call, admin, db, t, other } = await openTenants());
    leads = salesRoutes(call, 'leads', () => t);
    deals = salesRoutes(call, 'deals', () => t);
    lead = await leads.created({ title: 'Proposal lead' });
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('creates a proposal of a lead: 201, prices computed on the server, version 1, draft, the first is primary', async () => {
    const p = await created({ crm_lead_id: lead.id, title: 'Offer', items, discount_type: 'percentage', discount_value: 10 });
    expect(p).to.include({ title: 'Offer', version: 1, status: 1, is_primary: true, subtotal: 74.97, total: 67.47, crm_lead_id: lead.id });
    expect(p).to.include({ crm_deal_id: null, discount_type: 'percentage', discount_value: 10, approved_at: null, approved_by: null });
    expect(p.code).to.be.a('number');
    expect(p.created_by).to.deep.equal({ id: t.user.id, name: 'Integrator', avatar: null });
    expect(p.items.map((i: any) => [i.name, i.quantity, i.unit_price, i.total])).to.deep.equal([
      ['Licence', 3, 19.99, 59.97],
      ['Setup', 1.5, 10, 15],
    ]);
    expect(p.attachments).to.deep.equal([]);
    expect(Date.parse(p.created_at)).to.be.closeTo(Date.now(), 60_000);
    const again = await call('GET', `${P}/${p.id}`, { token: t.key.key });
    expect(again.status).to.equal(200);
    expect(again.body).to.deep.equal(p);
  });

  it('keeps one primary proposal per lead: a later one is not primary unless asked, and then replaces the first', async () => {
    const own = await leads.created({ title: 'Primary rules' });
    const first = await created({ crm_lead_id: own.id, title: 'First' });
    const second = await created({ crm_lead_id: own.id, title: 'Second' });
    expect([first.is_primary, second.is_primary]).to.deep.equal([true, false]);
    const third = await created({ crm_lead_id: own.id, title: 'Third', is_primary: true });
    expect(third.is_primary).to.equal(true);
    expect((await call('GET', `${P}/${first.id}`, { token: t.key.key })).body.is_primary).to.equal(false);
    const moved = await put(second.id, { is_primary: true });
    expect(moved.body.is_primary).to.equal(true);
    expect((await call('GET', `${P}/${third.id}`, { token: t.key.key })).body.is_primary).to.equal(false);
  });

  it('leaves exactly one primary when proposals of a lead are created at once', async () => {
    const own = await leads.created({ title: 'Concurrent' });
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, i) => created({ crm_lead_id: own.id, title: `P${i}`, is_primary: i % 2 === 0 })),
    );
    expect(made).to.have.length(6);
    const list = await call('GET', `${P}?crm_lead_id=${own.id}`, { token: t.key.key });
    expect(list.body.records.filter((p: any) => p.is_primary)).to.have.length(1);
  });

  describe('validation: 400 naming the field, nothing written', () => {
    let before: number;
    beforeEach(async () => {
      before = await rows();
    });
    afterEach(async () => expect(await rows()).to.equal(before));
    const base = () => ({ crm_lead_id: lead.id, title: 'X', items });
    it('no lead or deal, or both', async () => {
      expect400(await post({ title: 'X' }), 'crm_lead_id');
      expect400(await post({ ...base(), crm_deal_id: lead.id }), 'crm_lead_id');
    });
    it('a title of 0 or 151 characters', async () => {
      expect400(await post({ ...base(), title: '' }), 'title');
      expect400(await post({ ...base(), title: 'x'.repeat(151) }), 'title');
    });
    it('an item with quantity 0, a negative price or 3 decimals of price', async () => {
      expect400(await post({ ...base(), items: [{ name: 'A', quantity: 0, unit_price: 1 }] }), 'items.0.quantity');
      expect400(await post({ ...base(), items: [{ name: 'A', quantity: 1, unit_price: -1 }] }), 'items.0.unit_price');
      expect400(await post({ ...base(), items: [{ name: 'A', quantity: 1, unit_price: 1.005 }] }), 'items.0.unit_price');
    });
    it('a discount over 100 % or over the subtotal, a value without a type, an unknown type', async () => {
      expect400(await post({ ...base(), discount_type: 'percentage', discount_value: 101 }), 'discount_value');
      expect400(await post({ ...base(), discount_type: 'amount', discount_value: 75 }), 'discount_value');
      expect400(await post({ ...base(), discount_value: 5 }), 'discount_type');
      expect400(await post({ ...base(), discount_type: 'gift', discount_value: 5 }), 'discount_type');
    });
    it('a subtotal or total sent by the client', async () => {
      expect400(await post({ ...base(), subtotal: 1 }), 'subtotal');
      expect400(await post({ ...base(), total: 1 }), 'total');
    });
  });

  it('updates: new prices, version + 1, approval sets approved_at and approved_by, rejection clears them', async () => {
    const p = await created({ crm_lead_id: lead.id, title: 'To update', items, discount_type: 'amount', discount_value: 4.97 });
    expect(p.total).to.equal(70);
    const priced = await put(p.id, { title: 'Updated', items: [{ name: 'Only', quantity: 2, unit_price: 50 }] });
    expect(priced.status, priced.text).to.equal(200);
    expect(priced.body).to.include({ title: 'Updated', version: 2, subtotal: 100, total: 95.03 });
    const approved = (await put(p.id, { status: 3 })).body;
    expect(approved).to.include({ status: 3, version: 3, rejected_at: null });
    expect(approved.approved_by).to.deep.equal({ id: t.user.id, name: 'Integrator' });
    expect(Date.parse(approved.approved_at)).to.be.closeTo(Date.now(), 60_000);
    const rejected = (await put(p.id, { status: 4 })).body;
    expect(rejected).to.include({ status: 4, approved_at: null, approved_by: null });
    expect(rejected.rejected_at).to.be.a('string');
    const valid = (await put(p.id, { valid_until: '2027-01-31T23:59:59Z', discount_type: null, discount_value: null })).body;
    expect(valid).to.include({ valid_until: '2027-01-31T23:59:59.000Z', total: 100, discount_type: null });
    expect400(await put(p.id, { status: 9 }), 'status');
    expect400(await put(p.id, { discount_type: 'amount', discount_value: 101 }), 'discount_value');
    expect((await put(p.id, { title: 'x' }, other.key.key)).status).to.equal(404);
  });

  it('archives: hidden from the list unless include_archived=true, still in the detail', async () => {
    const own = await leads.created({ title: 'Archive' });
    const a = await created({ crm_lead_id: own.id, title: 'Archived' });
    await created({ crm_lead_id: own.id, title: 'Live' });
    const archived = (await put(a.id, { archived: true })).body;
    expect(archived.archived_at).to.be.a('string');
    const list = await call('GET', `${P}?crm_lead_id=${own.id}`, { token: t.key.key });
    expect(list.body.records.map((p: any) => p.title)).to.deep.equal(['Live']);
    expect(list.body).to.include({ total: 1, next_cursor: null });
    const all = await call('GET', `${P}?crm_lead_id=${own.id}&include_archived=true`, { token: t.key.key });
    expect(all.body.records.map((p: any) => p.title)).to.deep.equal(['Live', 'Archived']);
    expect((await put(a.id, { archived: false })).body.archived_at).to.equal(null);
    expect((await call('GET', `${P}?crm_lead_id=${own.id}`, { token: other.key.key })).status).to.equal(404);
  });

  it('lists the company’s proposals without a record filter: only those of records the key creator may see, newest first, with a cursor (issue 23 item 11)', async () => {
    const co = await seedTenant(call, stack.adminToken);
    const masterKey = (await admin('POST', `/companies/${co.company.id}/keys`, { created_by_user_id: co.master.id, permissions: ['*'] }))
      .body.key as string;
    const ext = (method: string, path: string, token: string, body?: unknown) =>
      call(method, `/integrations/external${path}`, { token, body });
    const mine = (await ext('POST', '/leads', co.key.key, { title: 'Mine' })).body;
    const deal = (await ext('POST', '/deals', co.key.key, { title: 'My deal' })).body;
    const hidden = (await ext('POST', '/leads', masterKey, { title: 'Master private', visibility: 0 })).body;
    const make = async (token: string, body: unknown) => {
      const res = await ext('POST', '/proposals', token, body);
      expect(res.status, res.text).to.equal(201);
      return res.body;
    };
    const p1 = await make(co.key.key, { crm_lead_id: mine.id, title: 'One' });
    const p2 = await make(co.key.key, { crm_deal_id: deal.id, title: 'Two' });
    await make(masterKey, { crm_lead_id: hidden.id, title: 'Hidden' });
    const p3 = await make(co.key.key, { crm_lead_id: mine.id, title: 'Three' });

    const all = await ext('GET', '/proposals', co.key.key);
    expect(all.status, all.text).to.equal(200);
    expect(all.body.total).to.equal(3);
    expect(all.body.records.map((p: any) => p.id)).to.deep.equal([p3.id, p2.id, p1.id]);
    expect(all.body.next_cursor).to.equal(null);
    expect((await ext('GET', '/proposals', masterKey)).body.total).to.equal(4);
    expect((await ext('GET', `/proposals?crm_deal_id=${deal.id}`, co.key.key)).body.records.map((p: any) => p.id)).to.deep.equal([p2.id]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await ext('GET', `/proposals?take=1${cursor ? `&cursor=${cursor}` : ''}`, co.key.key);
      expect(page.status, page.text).to.equal(200);
      expect(page.body.total).to.equal(3);
      seen.push(...page.body.records.map((p: any) => p.id));
      cursor = page.body.next_cursor;
    } while (cursor && seen.length < 10);
    expect(seen).to.deep.equal([p3.id, p2.id, p1.id]);
    expect400(await ext('GET', '/proposals?cursor=garbage', co.key.key), 'cursor');
    // A take above the maximum is capped, not refused.
    const capped = await ext('GET', '/proposals?take=1000', co.key.key);
    expect(capped.status, capped.text).to.equal(200);
    expect(capped.body.records).to.have.length(3);
  });

  it('deletes logically: {id}, then 404, gone from the list and the detail; the row kept', async () => {
    const own = await leads.created({ title: 'Delete' });
    const p = await created({ crm_lead_id: own.id, title: 'Doomed' });
    expect((await call('DELETE', `${P}/${p.id}`, { token: other.key.key })).status).to.equal(404);
    const res = await call('DELETE', `${P}/${p.id}`, { token: t.key.key });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ id: p.id });
    expect((await call('GET', `${P}/${p.id}`, { token: t.key.key })).status).to.equal(404);
    expect((await call('DELETE', `${P}/${p.id}`, { token: t.key.key })).status).to.equal(404);
    expect((await leads.detail(own.id)).proposals).to.deep.equal([]);
    expect((await db.query('select deleted_at from crm.proposals where id = $1', [p.id])).rows[0].deleted_at).to.be.instanceOf(Date);
  });

  it('lists the proposals in the lead detail with exactly the summary fields, counted, current after each change', async () => {
    const own = await leads.created({ title: 'Detail' });
    expect((await leads.detail(own.id)).associations_count.proposals).to.equal(0);
    const p = await created({ crm_lead_id: own.id, title: 'Shown', items, discount_type: 'percentage', discount_value: 10 });
    const d = await leads.detail(own.id);
    expect(d.associations_count.proposals).to.equal(1);
    expect(d.proposals).to.have.length(1);
    expect(Object.keys(d.proposals[0])).to.have.members(SUMMARY_FIELDS);
    expect(d.proposals[0]).to.include({ id: p.id, code: p.code, title: 'Shown', subtotal: 74.97, total: 67.47, is_primary: true });
    expect(d.proposals[0].created_by).to.deep.equal({ id: t.user.id, name: 'Integrator', avatar: null });
    await put(p.id, { status: 3 });
    const after = (await leads.detail(own.id)).proposals[0];
    expect(after.approved_by).to.deep.equal({ id: t.user.id, name: 'Integrator' });
    expect(after.version).to.equal(2);
  });

  it('serves deals alike: created for a deal, listed in its detail', async () => {
    const deal = await deals.created({ title: 'Deal with proposal' });
    const p = await created({ crm_deal_id: deal.id, title: 'Deal offer', items });
    expect(p).to.include({ crm_deal_id: deal.id, crm_lead_id: null, is_primary: true });
    const d = await deals.detail(deal.id);
    expect(d.associations_count.proposals).to.equal(1);
    expect(d.proposals.map((x: any) => x.id)).to.deep.equal([p.id]);
    const list = await call('GET', `${P}?crm_deal_id=${deal.id}`, { token: t.key.key });
    expect(list.body.total).to.equal(1);
  });

  it('401 without a key, 403 without crm/proposals.read or crm/proposals.write', async () => {
    const p = await created({ crm_lead_id: lead.id, title: 'Guarded' });
    expect((await call('GET', `${P}/${p.id}`)).status).to.equal(401);
    expect((await call('POST', P, { body: { crm_lead_id: lead.id, title: 'X' } })).status).to.equal(401);
    const readOnly = (
      await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/proposals.read'] })
    ).body.key;
    const writeOnly = (
      await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/proposals.write'] })
    ).body.key;
    expect((await call('GET', `${P}/${p.id}`, { token: readOnly })).status).to.equal(200);
    const refused = await post({ crm_lead_id: lead.id, title: 'X' }, readOnly);
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.contain('crm/proposals.write');
    expect((await put(p.id, { title: 'Y' }, readOnly)).status).to.equal(403);
    expect((await call('DELETE', `${P}/${p.id}`, { token: readOnly })).status).to.equal(403);
    expect((await call('GET', `${P}/${p.id}`, { token: writeOnly })).status).to.equal(403);
  });

  it("404 for another company's proposal or lead, and for a lead hidden from the key creator", async () => {
    const p = await created({ crm_lead_id: lead.id, title: 'Mine' });
    expect((await call('GET', `${P}/${p.id}`, { token: other.key.key })).status).to.equal(404);
    expect((await call('GET', `${P}/not-a-uuid`, { token: t.key.key })).status).to.equal(404);
    const res = await post({ crm_lead_id: lead.id, title: 'Theirs' }, other.key.key);
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ statusCode: 404, message: 'Lead not found', error: 'Not Found' });
    const colleague = await admin('POST', `/companies/${t.company.id}/users`, { name: 'Colleague', email: `c-${Date.now()}@example.test` });
    const colleagueKey = (
      await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: colleague.body.id, permissions: ['*'] })
    ).body.key;
    const hidden = await leads.created({ title: 'Private' }, { token: colleagueKey });
    const theirs = await created({ crm_lead_id: hidden.id, title: 'Hidden' }, colleagueKey);
    expect((await post({ crm_lead_id: hidden.id, title: 'X' })).status).to.equal(404);
    expect((await call('GET', `${P}/${theirs.id}`, { token: t.key.key })).status).to.equal(404);
  });

  it('attaches documents of the company library (admin API) and removes attachments', async () => {
    const doc = await admin('POST', `/companies/${t.company.id}/proposal-documents`, {
      name: 'Terms',
      file_name: 'terms.pdf',
      mime_type: 'application/pdf',
      file_size: 1234,
      url: 'https://library.example.test/terms.pdf',
    });
    expect(doc.status, doc.text).to.equal(201);
    expect(doc.body).to.include({ name: 'Terms', file_name: 'terms.pdf', file_size: 1234 });
    expect((await admin('POST', `/companies/${t.company.id}/proposal-documents`, { name: 'X' })).status).to.equal(400);
    const foreign = await admin('POST', `/companies/${other.company.id}/proposal-documents`, {
      name: 'Theirs',
      file_name: 'x.pdf',
      mime_type: 'application/pdf',
      file_size: 1,
      url: 'https://library.example.test/x.pdf',
    });
    const p = await created({ crm_lead_id: lead.id, title: 'With terms' });
    const attached = await call('POST', `${P}/${p.id}/documents`, { token: t.key.key, body: { document_id: doc.body.id } });
    expect(attached.status, attached.text).to.equal(201);
    expect(attached.body.attachments).to.have.length(1);
    expect(attached.body.attachments[0]).to.include({
      kind: 'document',
      document_id: doc.body.id,
      file_name: 'terms.pdf',
      file_size: 1234,
    });
    expect400(await call('POST', `${P}/${p.id}/documents`, { token: t.key.key, body: { document_id: foreign.body.id } }), 'document_id');
    const listed = await call('GET', `${P}/${p.id}/attachments`, { token: t.key.key });
    expect(listed.body.records).to.have.length(1);
    const removed = await call('DELETE', `${P}/${p.id}/attachments/${attached.body.attachments[0].id}`, { token: t.key.key });
    expect(removed.status, removed.text).to.equal(200);
    expect(removed.body.attachments).to.deep.equal([]);
    expect((await call('DELETE', `${P}/${p.id}/attachments/${attached.body.attachments[0].id}`, { token: t.key.key })).status).to.equal(
      404,
    );
  });

  it('fires no proposal.* events', async () => {
    const { rows: events } = await db.query(`select event_key from crm.outbox where event_key like 'proposal%'`);
    expect(events).to.deep.equal([]);
  });
});
