import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type pg from 'pg';
import type { client } from '../support/client.js';
import { type adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { adminCreator, expect400, outboxKeysOf, salesRoutes, seedSalesReferences } from '../support/sales.js';
import { openStack } from '../support/session.js';
import type { Stack } from '../support/stack.js';

/**
 * External ids, POST /leads/batch (create and upsert) and the persons' deduplication receipts (issue 22 items 1-3),
 * through the gateway.
 */
describe('lead external ids, batches and person receipts', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  const ref: Record<string, any> = {};
  const leads = salesRoutes(
    (...a) => call(...a),
    'leads',
    () => t,
  );
  const batch = (body: unknown, token = t.key.key) => call('POST', '/integrations/external/leads/batch', { token, body });
  const ok = async (body: unknown, token = t.key.key) => {
    const res = await batch(body, token);
    expect(res.status, res.text).to.equal(200);
    return res.body.results as any[];
  };
  const count = async (sql: string, params: unknown[]) => (await db.query(sql, params)).rows[0].n as number;
  const leadsOf = (tenant: Tenant) => count('select count(*)::int n from crm.leads where company_id = $1', [tenant.company.id]);
  const keyWith = async (permissions: string[], tenant = t, extra: Record<string, unknown> = {}) => {
    const res = await admin('POST', `/companies/${tenant.company.id}/keys`, { created_by_user_id: tenant.user.id, permissions, ...extra });
    expect(res.status, res.text).to.equal(201);
    return res.body.key as string;
  };
  const ext = () => `shop-${randomUUID()}`;
  const made = async (body: Record<string, unknown>): Promise<any> => leads.created(body);

  before(async () => {
    let a: ReturnType<typeof adminOf>;
    ({ stack, call, admin: a, db } = await openStack());
    admin = a;
    t = await seedTenant(call, stack.adminToken);
    other = await seedTenant(call, stack.adminToken);
    Object.assign(
      ref,
      await seedSalesReferences(
        adminCreator(admin, () => t),
        'lead',
        other,
      ),
    );
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  describe('external ids', () => {
    it('is kept on the lead, shown in the detail, the list and lead.created, and names it as ext:<id>', async () => {
      const id = ext();
      const lead = await leads.created({ title: 'From the shop', external_id: id });
      const detail = await leads.detail(`ext:${id}`);
      expect(detail.id).to.equal(lead.id);
      expect(detail.external_id).to.equal(id);
      const page = await leads.list('?take=50');
      expect(page.records.find((r) => r.id === lead.id)?.external_id).to.equal(id);
      const { rows } = await db.query(`select payload from crm.outbox where event_key = 'lead.created' and payload->'lead'->>'id' = $1`, [
        lead.id,
      ]);
      expect(rows[0].payload.lead.external_id).to.equal(id);
      // Kept as sent; a ref with reserved characters is percent-encoded in the path.
      const odd = `Order #42/ä ${randomUUID()}`;
      const oddLead = await leads.created({ title: 'Odd id', external_id: odd });
      expect((await leads.detail(`ext:${encodeURIComponent(odd)}`)).id).to.equal(oddLead.id);
      const plain = await leads.created({ title: 'No external id' });
      expect((await leads.detail(plain.id)).external_id).to.equal(null);
    });

    it('a second lead with the same external id is a 409 naming the existing one; nothing is written', async () => {
      const id = ext();
      const first = await leads.created({ title: 'First', external_id: id });
      const before = await leadsOf(t);
      const res = await leads.create({ title: 'Second', external_id: id, person: { name: 'Nobody' } });
      expect(res.status, res.text).to.equal(409);
      expect(res.body).to.include({ statusCode: 409, error: 'Conflict' });
      expect(res.body.message).to.contain(first.id);
      expect(await leadsOf(t)).to.equal(before);
      expect(await count(`select count(*)::int n from crm.persons where company_id = $1 and name = 'Nobody'`, [t.company.id])).to.equal(0);
    });

    it('is per company: another company may use the same one, and cannot read ours by it (404)', async () => {
      const id = ext();
      const mine = await leads.created({ title: 'Mine', external_id: id });
      const theirs = await leads.created({ title: 'Theirs', external_id: id }, { tenant: other });
      expect(theirs.id).to.not.equal(mine.id);
      expect((await leads.detail(`ext:${id}`, other.key.key)).id).to.equal(theirs.id);
      const res = await leads.get(`ext:${ext()}`);
      expect(res.status, res.text).to.equal(404);
      expect(res.body).to.include({ statusCode: 404, error: 'Not Found' });
    });

    it('PUT by ext: changes the lead and may set or clear the external id; 1-255 characters', async () => {
      const id = ext();
      const lead = await leads.created({ title: 'Old', external_id: id });
      const res = await leads.put(`ext:${id}`, { title: 'New', external_id: null });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.id).to.equal(lead.id);
      expect((await leads.get(`ext:${id}`)).status).to.equal(404);
      expect((await leads.detail(lead.id)).external_id).to.equal(null);
      expect400(await leads.create({ title: 'Empty', external_id: '' }), 'external_id');
      expect400(await leads.create({ title: 'Long', external_id: 'x'.repeat(256) }), 'external_id');
      const taken = await leads.created({ title: 'Holder', external_id: `${id}-2` });
      const clash = await leads.put(lead.id, { title: 'New', external_id: `${id}-2` });
      expect(clash.status, clash.text).to.equal(409);
      expect(clash.body.message).to.contain(taken.id);
    });
  });

  describe('person receipts of a creation', () => {
    it('says whether each person was created, found by e-mail or phone, or named by id', async () => {
      const email = `rec-${randomUUID()}@example.test`;
      const phone = `+55 11 9${Math.floor(Math.random() * 1e8)}`;
      const first = await made({ title: 'New person', person: { name: 'Rita', contacts: [{ type: 1, value: email }] } });
      expect(first.person?.match).to.equal('created');
      expect(first).to.not.have.property('persons');
      const dedup = { avoid_duplicate: true, duplicate_check_types: [1, 2] };
      const byEmail = await made({
        title: 'Same e-mail',
        person: {
          name: 'Rita again',
          contacts: [
            { type: 1, value: email.toUpperCase() },
            { type: 2, value: phone },
          ],
          ...dedup,
        },
      });
      expect(byEmail.person).to.deep.equal({ id: first.person.id, match: 'email' });
      const byPhone = await made({
        title: 'Same phone',
        person: { name: 'Rita by phone', contacts: [{ type: 2, value: phone.replace(/\D/g, '') }], ...dedup },
      });
      expect(byPhone.person).to.deep.equal({ id: first.person.id, match: 'phone' });
      const several = await made({
        title: 'Several',
        person: { name: 'Fresh', contacts: [] },
        persons_id: [ref.ana.id],
      });
      expect(several.persons).to.have.length(2);
      expect(several.persons[0]).to.deep.equal(several.person);
      expect(several.person.match).to.equal('created');
      expect(several.persons[1]).to.deep.equal({ id: ref.ana.id, match: 'id' });
      const none = await made({ title: 'Nobody' });
      expect(none).to.not.have.property('person');
    });
  });

  describe('POST /leads/batch', () => {
    it('a batch of 100: duplicates inside it, failing items beside succeeding ones, results in order', async () => {
      const dup = ext();
      const email = `dup-${randomUUID()}@example.test`;
      const person = { contacts: [{ type: 1, value: email }], avoid_duplicate: true, duplicate_check_types: [1] };
      const items: Record<string, unknown>[] = [];
      for (let i = 0; i < 100; i++) items.push({ title: `Item ${i}`, external_id: `${dup}-${i}` });
      items[10] = { title: 'Dup A', external_id: dup };
      items[11] = { title: 'Dup B', external_id: dup };
      items[20] = { title: 'Mail A', person: { name: 'Mia', ...person } };
      items[21] = { title: 'Mail B', person: { name: 'Mia B', ...person } };
      items[30] = { external_id: `${dup}-bad` };
      items[31] = { title: 'Unknown tag', tags: [randomUUID()] };
      items[32] = { title: 'x'.repeat(151) };
      const before = await leadsOf(t);
      const eventsBefore = await count(`select count(*)::int n from crm.outbox where company_id = $1 and event_key = 'lead.created'`, [
        t.company.id,
      ]);
      const results = await ok({ mode: 'create', items });
      expect(results.map((r) => r.index)).to.deep.equal([...Array(100).keys()]);
      expect(results[11]).to.include({ status: 409, action: 'failed' });
      expect(results[11].error).to.include({ statusCode: 409, error: 'Conflict' });
      expect(results[11].error.message).to.contain(results[10].id);
      expect(results[20].person.match).to.equal('created');
      expect(results[21].person).to.deep.equal({ id: results[20].person.id, match: 'email' });
      expect(results[30]).to.include({ status: 400, action: 'failed' });
      expect(results[30].error.details.fields.map((f: any) => f.field)).to.include('title');
      expect(results[31].error.message).to.contain('tags[0]');
      expect(results[32].error.message).to.contain('title');
      const failed = [11, 30, 31, 32];
      for (const r of results) {
        if (failed.includes(r.index)) continue;
        expect(r, JSON.stringify(r)).to.include({ status: 201, action: 'created' });
        expect(r.id).to.be.a('string');
        expect(r).to.not.have.property('error');
      }
      expect(await leadsOf(t)).to.equal(before + 96);
      const events = await count(`select count(*)::int n from crm.outbox where company_id = $1 and event_key = 'lead.created'`, [
        t.company.id,
      ]);
      expect(events).to.equal(eventsBefore + 96);
      expect((await leads.detail(`ext:${dup}-99`)).id).to.equal(results[99].id);
    });

    it('upsert: an item naming a live lead by external_id updates it (lead.updated), unchanged when it changes nothing', async () => {
      const id = ext();
      const [created] = await ok({ mode: 'upsert', items: [{ title: 'Upserted', external_id: id, quality_rating: 3 }] });
      expect(created).to.include({ index: 0, status: 201, action: 'created' });
      const keysAfterCreate = await outboxKeysOf(db, created.id);
      expect(keysAfterCreate).to.deep.equal(['lead.created']);
      const [same] = await ok({ mode: 'upsert', items: [{ title: 'Upserted', external_id: id, quality_rating: 3 }] });
      expect(same).to.deep.equal({ index: 0, status: 200, id: created.id, code: created.code, action: 'unchanged' });
      expect(await outboxKeysOf(db, created.id)).to.deep.equal(['lead.created']);
      const [changed] = await ok({
        mode: 'upsert',
        items: [{ title: 'Renamed', external_id: id, quality_rating: 4, persons_id: [ref.ana.id] }],
      });
      expect(changed).to.include({ status: 200, id: created.id, action: 'updated' });
      expect(await outboxKeysOf(db, created.id)).to.deep.equal(['lead.created', 'lead.quality_updated', 'lead.updated']);
      const detail = await leads.detail(created.id);
      expect(detail.title).to.equal('Renamed');
      expect(detail.participants.map((p: any) => p.person.id)).to.deep.equal([ref.ana.id]);
      // The update route's rules: what it does not take is a 400 naming the field, nothing written.
      const [refused] = await ok({ mode: 'upsert', items: [{ title: 'Again', external_id: id, note: { content: 'hi' } }] });
      expect(refused).to.include({ status: 400, action: 'failed' });
      expect(refused.error.details.fields).to.deep.equal([{ field: 'note', message: 'not taken when an upsert updates an existing lead' }]);
      expect((await leads.detail(created.id)).title).to.equal('Renamed');
      // The same external id twice in one upsert batch: created, then updated.
      const twice = ext();
      const pair = await ok({
        mode: 'upsert',
        items: [
          { title: 'One', external_id: twice },
          { title: 'Two', external_id: twice },
        ],
      });
      expect(pair.map((r) => r.action)).to.deep.equal(['created', 'updated']);
      expect(pair[1].id).to.equal(pair[0].id);
    });

    it('concurrent upserts of one new external id create one lead; the others update it', async () => {
      const id = ext();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          ok({ mode: 'upsert', items: [{ title: 'Raced', external_id: id, quality_rating: (i % 5) + 1 }] }),
        ),
      );
      const results = answers.map(([r]) => r);
      expect(
        results.filter((r) => r.action === 'created'),
        JSON.stringify(results),
      ).to.have.length(1);
      expect(
        results.every((r) => r.action !== 'failed'),
        JSON.stringify(results),
      ).to.equal(true);
      expect(new Set(results.map((r) => r.id)).size).to.equal(1);
      expect(await count('select count(*)::int n from crm.leads where company_id = $1 and external_id = $2', [t.company.id, id])).to.equal(
        1,
      );
    });

    it('per-item idempotency_key: a retried batch answers the same leads and writes nothing new', async () => {
      const k = randomUUID();
      const items = [
        { title: 'Keyed A', idempotency_key: `${k}-a` },
        { title: 'Keyed B', idempotency_key: `${k}-b` },
      ];
      const first = await ok({ items });
      expect(first.map((r) => r.action)).to.deep.equal(['created', 'created']);
      const before = await leadsOf(t);
      const again = await ok({ items });
      expect(again.map((r) => r.id)).to.deep.equal(first.map((r) => r.id));
      expect(again.map((r) => r.status)).to.deep.equal([201, 201]);
      expect(await leadsOf(t)).to.equal(before);
      // A key the single route used is the same key, and its replay repeats the person receipt.
      const single: any = await leads.created({ title: 'Single', person: { name: 'Kay' } }, { key: `${k}-c` });
      expect(single.person.match).to.equal('created');
      const [replayed] = await ok({ items: [{ title: 'Single', person: { name: 'Kay' }, idempotency_key: `${k}-c` }] });
      expect(replayed).to.deep.include({ id: single.id, action: 'created', person: single.person });
    });

    it('permissions per mode: create needs create; an upsert that updates needs update, one that creates needs create', async () => {
      const id = ext();
      const existing = await leads.created({ title: 'Existing', external_id: id });
      const createOnly = await keyWith(['crm/lead.create']);
      const updateOnly = await keyWith(['crm/lead.update']);
      const readOnly = await keyWith(['crm/lead.read']);
      const [denied] = await ok({ mode: 'upsert', items: [{ title: 'Changed', external_id: id }] }, createOnly);
      expect(denied).to.include({ status: 403, action: 'failed' });
      expect(denied.error).to.include({ statusCode: 403, error: 'Forbidden' });
      expect(denied.error.message).to.contain('crm/lead.update');
      expect((await leads.detail(existing.id)).title).to.equal('Existing');
      const before = await leadsOf(t);
      const whole = await batch({ mode: 'create', items: [{ title: 'Nope' }] }, updateOnly);
      expect(whole.status, whole.text).to.equal(403);
      expect((await batch({ mode: 'upsert', items: [{ title: 'Nope' }] }, readOnly)).status).to.equal(403);
      const mixed = await ok(
        {
          mode: 'upsert',
          items: [
            { title: 'Changed', external_id: id },
            { title: 'New', external_id: ext() },
          ],
        },
        updateOnly,
      );
      expect(mixed.map((r) => [r.status, r.action])).to.deep.equal([
        [200, 'updated'],
        [403, 'failed'],
      ]);
      expect(await leadsOf(t)).to.equal(before);
    });

    it('tenancy: another company’s external id is not matched; an upsert creates in the key’s company', async () => {
      const id = ext();
      const theirs = await leads.created({ title: 'Theirs', external_id: id }, { tenant: other });
      const [mine] = await ok({ mode: 'upsert', items: [{ title: 'Mine', external_id: id, persons_id: [ref.foreignPerson.id] }] });
      expect(mine).to.include({ status: 400, action: 'failed' });
      const [created] = await ok({ mode: 'upsert', items: [{ title: 'Mine', external_id: id }] });
      expect(created).to.include({ status: 201, action: 'created' });
      expect(created.id).to.not.equal(theirs.id);
      expect((await leads.detail(theirs.id, other.key.key)).title).to.equal('Theirs');
    });

    it('whole-batch problems are a 400 with nothing written: no items, more than 100, not JSON, unknown mode', async () => {
      const before = await leadsOf(t);
      expect400(await batch({ mode: 'create' }), 'items');
      expect400(await batch({ items: [] }), 'items');
      expect400(await batch({ items: Array.from({ length: 101 }, (_, i) => ({ title: `T${i}` })) }), 'items');
      expect400(await batch({ mode: 'merge', items: [{ title: 'x' }] }), 'mode');
      const raw = await call('POST', '/integrations/external/leads/batch', { token: t.key.key, rawBody: '{"items": [' });
      expect(raw.status, raw.text).to.equal(400);
      expect(await leadsOf(t)).to.equal(before);
    });

    it('the rate limit counts each item; a batch over what is left is a 429 with nothing written, costing one point', async () => {
      const limited = await seedTenant(call, stack.adminToken, { rate_limit_per_minute: 10 });
      const items = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `R${i}` }));
      const first = await batch({ items: items(4) }, limited.key.key);
      expect(first.status, first.text).to.equal(200);
      expect(first.headers.get('ratelimit-remaining')).to.equal('6');
      const over = await batch({ items: items(7) }, limited.key.key);
      expect(over.status, over.text).to.equal(429);
      expect(over.body).to.include({ statusCode: 429, error: 'Too Many Requests' });
      expect(Number(over.headers.get('retry-after'))).to.be.within(1, 60);
      expect(await leadsOf(limited)).to.equal(4);
      // The refused batch cost one point, as any refused request.
      const next = await batch({ items: items(1) }, limited.key.key);
      expect(next.status, next.text).to.equal(200);
      expect(next.headers.get('ratelimit-remaining')).to.equal('4');
    });
  });
});
