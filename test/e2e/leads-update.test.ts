import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type pg from 'pg';
import type { client } from '../support/client.js';
import type { adminOf, Tenant } from '../support/fixtures.js';
import { expect400 } from '../support/sales.js';
import { openTenants } from '../support/session.js';
import type { Stack } from '../support/stack.js';

describe('PUT /integrations/external/leads/{id}', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  const ref: Record<string, any> = {};

  const create = async (body: Record<string, unknown> = {}) => {
    const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Lead', ...body } });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number };
  };
  const put = (leadRef: string | number, body: unknown, token = t.key.key) =>
    call('PUT', `/integrations/external/leads/${leadRef}`, { token, body });
  const detail = async (id: string) => {
    const res = await call('GET', `/integrations/external/leads/${id}`, { token: t.key.key });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const adminCreate = async (path: string, body: unknown, tenant = t) => {
    const res = await admin('POST', `/companies/${tenant.company.id}/${path}`, body);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const leadRow = async (id: string) => (await db.query('select * from crm.leads where id = $1', [id])).rows[0];

  before(async () => {
    ({ stack, call, admin, db, t, other } = await openTenants());
    ref.ana = await adminCreate('persons', { name: 'Ana', contacts: [{ type: 1, value: 'ana@example.test' }] });
    ref.bruno = await adminCreate('persons', { name: 'Bruno', contacts: [] });
    ref.acme = await adminCreate('organizations', { name: 'Acme' });
    ref.size = await adminCreate('custom-fields', { entity: 'lead', name: 'Size', type: 'number' });
    ref.segment = await adminCreate('custom-fields', { entity: 'lead', name: 'Segment', type: 'select', options: ['SMB', 'Enterprise'] });
    ref.contract = await adminCreate('custom-fields', { entity: 'lead', name: 'Contract', type: 'file' });
    ref.colleague = await adminCreate('users', { name: 'Colleague', email: `c-${randomUUID()}@example.test` });
    ref.source = await adminCreate('lead-sources', { name: 'Referral' });
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('answers the update response shape, by id and by code', async () => {
    const lead = await create({ quality_rating: 2 });
    const res = await put(lead.id, { title: 'Renamed' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({
      id: lead.id,
      code: lead.code,
      title: 'Renamed',
      status: 1,
      quality_rating: 2,
      quality_reason: null,
      lost_reason_description: null,
    });
    expect((await put(lead.code, { title: 'By code' })).body.title).to.equal('By code');
    expect((await detail(lead.id)).title).to.equal('By code');
  });

  it('changes stage, responsible, visibility and qualification', async () => {
    const lead = await create();
    const res = await put(lead.id, {
      title: 'Moved',
      stage_id: t.pipeline.stages[1].id,
      responsible_id: ref.colleague.id,
      visibility: 1,
      quality_rating: 5,
      quality_reason: 'Hot',
    });
    expect(res.body).to.include({ quality_rating: 5, quality_reason: 'Hot' });
    const d = await detail(lead.id);
    expect(d.stage.id).to.equal(t.pipeline.stages[1].id);
    expect(d.responsible.id).to.equal(ref.colleague.id);
    expect(d.visibility).to.equal(1);
    expect(d.stage_durations.map((s: any) => s.stage_name)).to.deep.equal(['New', 'Qualified']);
    expect((await put(lead.id, { title: 'Moved', quality_rating: null, quality_reason: null })).body).to.include({
      quality_rating: null,
      quality_reason: null,
    });
  });

  it('persons_id adds persons and removes them with delete; person adds (deduplicated) one', async () => {
    const lead = await create({ persons_id: [ref.ana.id] });
    await put(lead.id, { title: 'People', persons_id: [{ person_id: ref.bruno.id }, { person_id: ref.ana.id, delete: true }] });
    let d = await detail(lead.id);
    expect(d.participants.map((p: any) => p.person.id)).to.deep.equal([ref.bruno.id]);
    await put(lead.id, {
      title: 'People',
      person: { name: 'Ana again', contacts: [{ type: 1, value: 'ANA@example.test' }], avoid_duplicate: true, duplicate_check_types: [1] },
    });
    d = await detail(lead.id);
    expect(d.participants.map((p: any) => p.person.id).sort()).to.deep.equal([ref.ana.id, ref.bruno.id].sort());
    expect400(await put(lead.id, { title: 'x', persons_id: [{ person_id: randomUUID() }] }), 'persons_id[0].person_id');
  });

  it('phone and email are added to the main person; without a person they are a 400', async () => {
    const lead = await create({ persons_id: [ref.bruno.id] });
    expect((await put(lead.id, { title: 'Contacts', phone: '+55 11 97777-0000', email: 'bruno@example.test' })).status).to.equal(200);
    const contacts = (await detail(lead.id)).participants[0].person.contacts.map((c: any) => [c.type, c.value]);
    expect(contacts).to.deep.equal([
      [1, 'bruno@example.test'],
      [2, '+55 11 97777-0000'],
    ]);
    const alone = await create();
    expect400(await put(alone.id, { title: 'x', phone: '123' }), 'phone');
  });

  it('organization_id links, null unlinks, organization creates; both together are a 400', async () => {
    const lead = await create();
    await put(lead.id, { title: 'Org', organization_id: ref.acme.id });
    expect((await detail(lead.id)).organization).to.deep.equal({ id: ref.acme.id, name: 'Acme', logo: null });
    await put(lead.id, { title: 'Org', organization_id: null });
    expect((await detail(lead.id)).organization).to.equal(null);
    expect((await leadRow(lead.id)).organization_id).to.equal(null);
    await put(lead.id, { title: 'Org', organization: { name: 'Fresh Org' } });
    expect((await detail(lead.id)).organization.name).to.equal('Fresh Org');
    expect400(await put(lead.id, { title: 'x', organization_id: null, organization: { name: 'Y' } }), 'organization_id');
    expect400(await put(lead.id, { title: 'x', organization_id: randomUUID() }), 'organization_id');
  });

  it('custom_fields set and clear answers; file fields are refused', async () => {
    const lead = await create({ custom_fields: [{ id: ref.size.id, value: '10' }] });
    await put(lead.id, {
      title: 'Fields',
      custom_fields: [
        { id: ref.size.id, value: null },
        { id: ref.segment.id, option_id: ref.segment.options[0].id },
      ],
    });
    const d = await detail(lead.id);
    expect(d.custom_fields.map((f: any) => [f.field_name, f.answers.map((a: any) => a.option_value ?? a.value)])).to.deep.equal([
      ['Segment', ['SMB']],
    ]);
    expect400(await put(lead.id, { title: 'x', custom_fields: [{ id: ref.contract.id, value: 'f' }] }), 'custom_fields[0].id');
  });

  it('crm_lead_source_id and lead_source {name} set the origin', async () => {
    const lead = await create();
    await put(lead.id, { title: 'Origin', crm_lead_source_id: ref.source.id });
    expect((await detail(lead.id)).lead_source).to.deep.equal({ id: ref.source.id, name: 'Referral', logo: null });
    await put(lead.id, { title: 'Origin', lead_source: { name: 'referral' } });
    expect((await detail(lead.id)).lead_source.id).to.equal(ref.source.id);
    await put(lead.id, { title: 'Origin', lead_source: { name: 'Brand New Source' } });
    expect((await detail(lead.id)).lead_source.name).to.equal('Brand New Source');
    expect400(await put(lead.id, { title: 'x', crm_lead_source_id: randomUUID() }), 'crm_lead_source_id');
    await put(lead.id, { title: 'Origin', crm_lead_source_id: null });
    expect((await detail(lead.id)).lead_source).to.equal(null);
  });

  describe('validation, access and nothing changed on a 400', () => {
    it('title is required and bounded; unknown fields are refused', async () => {
      const lead = await create({ title: 'Stays' });
      expect400(await put(lead.id, {}), 'title');
      expect400(await put(lead.id, { title: 'x'.repeat(151) }), 'title');
      expect400(await put(lead.id, { title: 'x', tags: [] }), 'tags');
      expect400(await put(lead.id, { title: 'x', visibility: 3 }), 'visibility');
      expect400(await put(lead.id, { title: 'x', stage_id: other.pipeline.stages[0].id }), 'stage_id');
      expect400(await put(lead.id, { title: 'x', responsible_id: other.user.id }), 'responsible_id');
      const row = await leadRow(lead.id);
      expect(row.title).to.equal('Stays');
      expect(row.stage_id).to.equal(t.pipeline.stages[0].id);
    });
    it('another company`s lead is 404; a lead hidden from the key creator is 403; without crm/lead.update 403', async () => {
      const lead = await create();
      expect((await put(lead.id, { title: 'x' }, other.key.key)).status).to.equal(404);
      const key = (await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: ref.colleague.id, permissions: ['*'] }))
        .body.key;
      expect((await put(lead.id, { title: 'x' }, key)).status).to.equal(403);
      const readOnly = (
        await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/lead.read'] })
      ).body.key;
      expect((await put(lead.id, { title: 'x' }, readOnly)).status).to.equal(403);
      expect((await put('999999', { title: 'x' })).status).to.equal(404);
    });
    it('a PUT that changes nothing keeps updated_at and writes no event', async () => {
      const lead = await create({
        title: 'Same',
        persons_id: [ref.ana.id],
        custom_fields: [
          { id: ref.size.id, value: '7' },
          { id: ref.segment.id, option_id: ref.segment.options[0].id },
        ],
      });
      const before = (await leadRow(lead.id)).updated_at;
      const events = async () =>
        (await db.query(`select count(*)::int n from crm.outbox where payload::text like '%' || $1 || '%'`, [lead.id])).rows[0].n;
      const eventsBefore = await events();
      const res = await put(lead.id, {
        title: 'Same',
        persons_id: [{ person_id: ref.ana.id }],
        custom_fields: [
          { id: ref.segment.id, option_id: ref.segment.options[0].id },
          { id: ref.size.id, value: ' 7 ' },
        ],
        email: 'ana@example.test',
      });
      expect(res.status, res.text).to.equal(200);
      expect((await leadRow(lead.id)).updated_at).to.deep.equal(before);
      expect(await events()).to.equal(eventsBefore);
      await put(lead.id, { title: 'Changed' });
      expect(await events()).to.equal(eventsBefore + 1);
    });
  });
});
