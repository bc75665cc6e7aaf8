import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

describe('POST and GET /integrations/external/leads (the platform path)', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let a: Tenant;
  let b: Tenant;
  const create = (t: Tenant, body: unknown) => call('POST', '/integrations/external/leads', { token: t.key.key, body });
  const get = (t: Tenant, ref: string | number) => call('GET', `/integrations/external/leads/${ref}`, { token: t.key.key });

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    a = await seedTenant(call, stack.adminToken);
    b = await seedTenant(call, stack.adminToken);
  });
  after(() => stack?.stop());

  it('answers 201 with exactly {id, code, title, measurement_consent}, consent GRANTED by default', async () => {
    const res = await create(a, { title: '  Trimmed title  ' });
    expect(res.status, res.text).to.equal(201);
    expect(res.body).to.have.all.keys('id', 'code', 'title', 'measurement_consent');
    expect(res.body.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(res.body.title).to.equal('Trimmed title');
    expect(res.body.measurement_consent).to.equal('GRANTED');
  });

  it('numbers codes sequentially per company, each company from 1', async () => {
    const first = (await create(b, { title: 'B one' })).body.code;
    const second = (await create(b, { title: 'B two' })).body.code;
    expect([first, second]).to.deep.equal([1, 2]);
    expect((await create(a, { title: 'A two' })).body.code).to.equal(2);
  });

  it('gives 20 concurrent creations 20 distinct consecutive codes', async () => {
    const t = await seedTenant(call, stack.adminToken);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => create(t, { title: `Concurrent ${i}` })));
    expect(results.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
    expect(results.map((r) => r.body.code).sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('reads the lead back by UUID and by code with the detail fields', async () => {
    const created = (await create(a, { title: 'Detail', visibility: 1, quality_rating: 4 })).body;
    for (const ref of [created.id, created.code]) {
      const res = await get(a, ref);
      expect(res.status, res.text).to.equal(200);
      const lead = res.body;
      expect(lead).to.include({
        id: created.id,
        code: created.code,
        title: 'Detail',
        measurement_consent: 'GRANTED',
        visibility: 1,
        quality_rating: 4,
        status: 1,
      });
      expect(lead.stage).to.deep.equal({ id: a.pipeline.stages[0].id, name: 'New', pipeline: { id: a.pipeline.id, name: 'Sales' } });
      expect(lead.responsible).to.deep.equal({ id: a.user.id, name: 'Integrator', avatar: null });
      expect(lead.created_by).to.deep.equal({ id: a.user.id, name: 'Integrator', avatar: null });
      expect(new Date(lead.created_at).toISOString()).to.equal(lead.created_at);
      expect(lead.pipeline_stages.map((s: { position: number }) => s.position)).to.deep.equal([1, 2, 3]);
      for (const empty of ['tags', 'participants', 'custom_fields', 'proposals', 'deals', 'followers', 'channel_chats', 'whatsapp_chats']) {
        expect(lead[empty], empty).to.deep.equal([]);
      }
      expect(lead.has_channel_chat).to.equal(false);
    }
    expect((await get(a, created.id)).body.views_count).to.equal(3);
  });

  it('counts every view: concurrent GETs each record one, another company`s GET records none, updated_at stays', async () => {
    const lead = (await create(a, { title: 'Viewed' })).body;
    const first = (await get(a, lead.id)).body;
    expect(first.views_count).to.equal(1);
    expect((await get(b, lead.id)).status).to.equal(404);
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => get(a, lead.code)));
    expect(concurrent.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
    // Each response counts the views committed before it plus its own: concurrent ones may show the same number.
    for (const r of concurrent) expect(r.body.views_count).to.be.within(2, 21);
    const last = (await get(a, lead.id)).body;
    expect(last.views_count).to.equal(22);
    expect(last.updated_at).to.equal(first.updated_at);
    const db = new pg.Client({ connectionString: stack.db.url });
    await db.connect();
    try {
      // The folder moves queued views to lead_views and into the counter within a fraction of a second.
      const folded = await eventually(async () => {
        const { rows } = await db.query(
          `select (select views_count from crm.leads where id = $1) counted,
                  (select count(*)::int from crm.lead_view_queue where lead_id = $1) queued,
                  (select json_agg(json_build_object('user_id', user_id, 'n', n)) from
                    (select user_id, count(*)::int n from crm.lead_views where lead_id = $1 group by user_id) v) viewers`,
          [lead.id],
        );
        return rows[0].queued === 0 ? rows[0] : undefined;
      }, 10_000);
      expect(folded).to.deep.equal({ counted: 22, queued: 0, viewers: [{ user_id: a.user.id, n: 22 }] });
      expect((await get(a, lead.id)).body.views_count).to.equal(23);
    } finally {
      await db.end();
    }
  });

  it('honours stage_id and an explicit consent', async () => {
    const stage = a.pipeline.stages[2];
    const res = await create(a, { title: 'Staged', stage_id: stage.id, measurement_consent: 'DENIED' });
    expect(res.body.measurement_consent).to.equal('DENIED');
    expect((await get(a, res.body.id)).body.stage.id).to.equal(stage.id);
  });

  it('gives an inactive responsible user`s lead to the master user', async () => {
    const u = (await admin('POST', `/companies/${a.company.id}/users`, { name: 'Away', email: `away-${Date.now()}@example.test` })).body;
    await admin('PATCH', `/companies/${a.company.id}/users/${u.id}`, { active: false });
    const res = await create(a, { title: 'Handed over', responsible_id: u.id });
    expect((await get(a, res.body.id)).body.responsible.id).to.equal(a.master.id);
  });

  describe('tenant isolation', () => {
    it("answers another company's lead with 404, by id and by code", async () => {
      const lead = (await create(a, { title: 'Private to A' })).body;
      const byId = await get(b, lead.id);
      expect(byId.status).to.equal(404);
      expect(byId.body).to.deep.equal({ statusCode: 404, message: 'Lead not found', error: 'Not Found' });
      const codeOnlyInA = lead.code + 1000;
      expect((await get(b, codeOnlyInA)).status).to.equal(404);
      const bFirst = await get(b, 1);
      expect(bFirst.body.title).to.equal('B one');
    });
    it("refuses another company's stage and responsible as unknown references (400)", async () => {
      const stage = await create(a, { title: 'x', stage_id: b.pipeline.stages[0].id });
      expect(stage.status).to.equal(400);
      expect(stage.body.message).to.contain('stage_id');
      const responsible = await create(a, { title: 'x', responsible_id: b.user.id });
      expect(responsible.status).to.equal(400);
      expect(responsible.body.message).to.contain('responsible_id');
    });
    it('answers an unknown or malformed reference with 404', async () => {
      for (const ref of ['00000000-0000-7000-8000-000000000000', '999999', 'abc', '0', '-1']) {
        expect((await get(a, ref)).status, ref).to.equal(404);
      }
    });
  });

  describe('validation: a clear 400 naming the field, and nothing written', () => {
    const cases: [string, unknown, string][] = [
      ['a missing title', {}, 'title'],
      ['an empty title', { title: '   ' }, 'title'],
      ['a title of 151 characters', { title: 'x'.repeat(151) }, 'title'],
      ['a top-level phone', { title: 'x', phone: '+5511999999999' }, 'phone'],
      ['a top-level email', { title: 'x', email: 'a@b.test' }, 'email'],
      ['lead_source', { title: 'x', lead_source: { name: 'Ads' } }, 'lead_source'],
      ['a visibility of 2', { title: 'x', visibility: 2 }, 'visibility'],
      ['an unknown consent', { title: 'x', measurement_consent: 'MAYBE' }, 'measurement_consent'],
      ['a quality_rating of 6', { title: 'x', quality_rating: 6 }, 'quality_rating'],
      ['a malformed stage_id', { title: 'x', stage_id: 'nope' }, 'stage_id'],
      ['an unknown stage', { title: 'x', stage_id: '00000000-0000-7000-8000-000000000000' }, 'stage_id'],
    ];
    for (const [what, body, field] of cases) {
      it(`rejects ${what}`, async () => {
        const res = await create(b, body);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error).to.equal('Bad Request');
        expect(res.body.message).to.contain(field);
      });
    }
    it('rejects malformed JSON with 400', async () => {
      const res = await call('POST', '/integrations/external/leads', { token: b.key.key, rawBody: '{"title":' });
      expect(res.status).to.equal(400);
    });
    it('wrote nothing for the rejected requests: the next code follows the last accepted one', async () => {
      expect((await create(b, { title: 'B three' })).body.code).to.equal(3);
    });
    it('needs a primary pipeline when no stage_id is sent', async () => {
      const bare = (
        await admin('POST', '/companies', { name: 'Bare', master_user: { name: 'M', email: `bare-${Date.now()}@example.test` } })
      ).body;
      const key = (await admin('POST', `/companies/${bare.id}/keys`, { created_by_user_id: bare.master_user.id, permissions: ['*'] })).body;
      const res = await call('POST', '/integrations/external/leads', { token: key.key, body: { title: 'x' } });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.contain('stage_id');
    });
  });
});
