import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { withoutChanges } from '../support/post-sale.js';
import { startReceiver } from '../support/receiver.js';
import {
  adminCreator,
  DEAL_SNAPSHOT_FIELDS,
  deliveredPayload,
  expect400,
  outboxKeysOf,
  salesEventKeys,
  salesRoutes,
} from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

/** PUT /deals/{id} through the gateway: PUT /leads' body and answer plus the deal's fields and status (decision 0052). */
describe('PUT /integrations/external/deals/{id}', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  let deals: ReturnType<typeof salesRoutes>;
  const ref: Record<string, any> = {};

  const ok = async (id: string | number, body: Record<string, unknown>) => {
    const res = await deals.put(id, { title: 'Deal', ...body });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const dealRow = async (id: string) => (await db.query('select * from crm.deals where id = $1', [id])).rows[0];
  const eventsOf = (dealId: string) => outboxKeysOf(db, dealId);
  const delivered = (dealId: string, key: string, count = 1) => deliveredPayload(receiver, 'deal', dealId, key, count);
  const withoutDetailExtras = ({ pipeline_stages: _p, stage_durations: _s, associations_count: _a, ...snapshot }: any) => snapshot;

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    receiver = await startReceiver();
    db = new pg.Client({ connectionString: stack.db.url });
    await db.connect();
    t = await seedTenant(call, stack.adminToken);
    other = await seedTenant(call, stack.adminToken);
    deals = salesRoutes(call, 'deals', () => t);
    const make = adminCreator(admin, () => t);
    const sub = await admin('POST', `/companies/${t.company.id}/webhooks`, {
      url: receiver.url(`/${t.company.id}`),
      events: salesEventKeys('deal'),
    });
    expect(sub.status, sub.text).to.equal(201);
    ref.ana = await make('persons', { name: 'Ana', contacts: [{ type: 1, value: 'ana@example.test' }] });
    ref.bruno = await make('persons', { name: 'Bruno', contacts: [] });
    ref.acme = await make('organizations', { name: 'Acme' });
    ref.hot = await make('tags', { name: 'Hot' });
    ref.vip = await make('tags', { name: 'VIP' });
    ref.size = await make('custom-fields', { entity: 'deal', name: 'Size', type: 'number' });
    ref.segment = await make('custom-fields', { entity: 'deal', name: 'Segment', type: 'select', options: ['SMB', 'Enterprise'] });
    ref.contract = await make('custom-fields', { entity: 'deal', name: 'Contract', type: 'file' });
    ref.leadOnly = await make('custom-fields', { entity: 'lead', name: 'Lead only', type: 'text' });
    ref.colleague = await make('users', { name: 'Colleague', email: `c-${randomUUID()}@example.test` });
    ref.source = await make('lead-sources', { name: 'Referral' });
  });
  after(async () => {
    await receiver?.close();
    await db?.end();
    await stack?.stop();
  });

  it('answers the lead update response shape, by id and by code; omitted fields keep their values', async () => {
    const deal = await deals.created({
      quality_rating: 2,
      value: 10,
      temperature: 3,
      expected_close_date: '2027-05-01',
      tags: [ref.hot.id],
      persons_id: [ref.ana.id],
      organization_id: ref.acme.id,
      custom_fields: [{ id: ref.size.id, value: '5' }],
    });
    const before = await deals.detail(deal.id);
    expect(await ok(deal.id, { title: 'Renamed' })).to.deep.equal({
      id: deal.id,
      code: deal.code,
      title: 'Renamed',
      status: 1,
      quality_rating: 2,
      quality_reason: null,
      lost_reason_description: null,
    });
    expect((await ok(deal.code, { title: 'By code' })).title).to.equal('By code');
    const after = await deals.detail(deal.id);
    const kept = ['value', 'temperature', 'expected_close_date', 'tags', 'participants', 'organization', 'custom_fields', 'quality_rating'];
    for (const field of kept) expect(after[field], field).to.deep.equal(before[field]);
    expect(after.title).to.equal('By code');
  });

  it('changes stage, responsible, visibility, qualification, value, expected_close_date and temperature; null clears', async () => {
    const deal = await deals.created({ value: 1 });
    const res = await ok(deal.id, {
      stage_id: t.pipeline.stages[1].id,
      responsible_id: ref.colleague.id,
      visibility: 1,
      quality_rating: 5,
      quality_reason: 'Hot',
      value: 2500.75,
      expected_close_date: '2027-06-30T10:00:00Z',
      temperature: -4,
    });
    expect(res).to.include({ quality_rating: 5, quality_reason: 'Hot' });
    const d = await deals.detail(deal.id);
    expect(d.stage.id).to.equal(t.pipeline.stages[1].id);
    expect(d.responsible.id).to.equal(ref.colleague.id);
    expect(d).to.include({ visibility: 1, value: 2500.75, expected_close_date: '2027-06-30T10:00:00.000Z', temperature: -4 });
    expect(d.stage_durations.map((s: any) => s.stage_name)).to.deep.equal(['New', 'Qualified']);
    await ok(deal.id, { value: null, expected_close_date: null, temperature: null, quality_rating: null, quality_reason: null });
    expect(await deals.detail(deal.id)).to.include({
      value: null,
      expected_close_date: null,
      temperature: null,
      quality_rating: null,
      quality_reason: null,
    });
  });

  it('persons_id adds persons and removes them with delete; person adds a deduplicated one; phone and email go to the main person', async () => {
    const deal = await deals.created({ persons_id: [ref.ana.id] });
    await ok(deal.id, { persons_id: [{ person_id: ref.bruno.id }, { person_id: ref.ana.id, delete: true }] });
    expect((await deals.detail(deal.id)).participants.map((p: any) => [p.main, p.person.id])).to.deep.equal([[true, ref.bruno.id]]);
    await ok(deal.id, {
      person: { name: 'Ana again', contacts: [{ type: 1, value: 'ANA@example.test' }], avoid_duplicate: true, duplicate_check_types: [1] },
    });
    const ids = (await deals.detail(deal.id)).participants.map((p: any) => p.person.id);
    expect(ids.sort()).to.deep.equal([ref.ana.id, ref.bruno.id].sort());
    await ok(deal.id, { phone: '+55 11 97777-0000' });
    const bruno = (await deals.detail(deal.id)).participants.find((p: any) => p.person.id === ref.bruno.id);
    expect(bruno.person.contacts.map((c: any) => [c.type, c.value])).to.deep.equal([[2, '+55 11 97777-0000']]);
    expect400(await deals.put(deal.id, { title: 'x', persons_id: [{ person_id: randomUUID() }] }), 'persons_id[0].person_id');
    const alone = await deals.created({});
    expect400(await deals.put(alone.id, { title: 'x', email: 'a@b.test' }), 'email');
  });

  it('organization_id links, null unlinks, organization creates; both together or an unknown one are a 400', async () => {
    const deal = await deals.created({});
    await ok(deal.id, { organization_id: ref.acme.id });
    expect((await deals.detail(deal.id)).organization).to.deep.equal({ id: ref.acme.id, name: 'Acme', logo: null });
    await ok(deal.id, { organization_id: null });
    expect((await deals.detail(deal.id)).organization).to.equal(null);
    expect((await dealRow(deal.id)).organization_id).to.equal(null);
    await ok(deal.id, { organization: { name: 'Fresh Org' } });
    expect((await deals.detail(deal.id)).organization.name).to.equal('Fresh Org');
    expect400(await deals.put(deal.id, { title: 'x', organization_id: null, organization: { name: 'Y' } }), 'organization_id');
    expect400(await deals.put(deal.id, { title: 'x', organization_id: randomUUID() }), 'organization_id');
  });

  it('custom_fields set and clear answers of deal fields; file and lead fields are refused', async () => {
    const deal = await deals.created({ custom_fields: [{ id: ref.size.id, value: '10' }] });
    await ok(deal.id, {
      custom_fields: [
        { id: ref.size.id, value: null },
        { id: ref.segment.id, option_id: ref.segment.options[0].id },
      ],
    });
    const d = await deals.detail(deal.id);
    expect(d.custom_fields.map((f: any) => [f.field_name, f.answers.map((a: any) => a.option_value ?? a.value)])).to.deep.equal([
      ['Segment', ['SMB']],
    ]);
    expect400(await deals.put(deal.id, { title: 'x', custom_fields: [{ id: ref.contract.id, value: 'f' }] }), 'custom_fields[0].id');
    expect400(await deals.put(deal.id, { title: 'x', custom_fields: [{ id: ref.leadOnly.id, value: 'f' }] }), 'custom_fields[0].id');
  });

  it('tags replace the deal`s tags (an empty list clears them); an unknown tag is a 400', async () => {
    const deal = await deals.created({ tags: [ref.hot.id] });
    await ok(deal.id, { tags: [ref.vip.id, ref.hot.id] });
    expect((await deals.detail(deal.id)).tags.map((x: any) => x.name)).to.deep.equal(['Hot', 'VIP']);
    await ok(deal.id, { tags: [ref.vip.id] });
    expect((await deals.detail(deal.id)).tags.map((x: any) => x.name)).to.deep.equal(['VIP']);
    expect400(await deals.put(deal.id, { title: 'x', tags: [ref.hot.id, randomUUID()] }), 'tags[1]');
    expect((await deals.detail(deal.id)).tags.map((x: any) => x.name)).to.deep.equal(['VIP']);
    await ok(deal.id, { tags: [] });
    expect((await deals.detail(deal.id)).tags).to.deep.equal([]);
  });

  it('status: won sets won_date, lost sets lost_date, open clears both; the same status changes nothing', async () => {
    const deal = await deals.created({});
    expect((await ok(deal.id, { status: 3 })).status).to.equal(3);
    let d = await deals.detail(deal.id);
    expect(d).to.include({ status: 3, won_date: null });
    expect(Date.parse(d.lost_date)).to.be.closeTo(Date.now(), 60_000);
    expect((await ok(deal.id, { status: 2 })).status).to.equal(2);
    d = await deals.detail(deal.id);
    expect(d).to.include({ status: 2, lost_date: null, lost_reason_description: null });
    expect(Date.parse(d.won_date)).to.be.closeTo(Date.now(), 60_000);
    await ok(deal.id, { status: 2 });
    expect((await deals.detail(deal.id)).won_date).to.equal(d.won_date);
    const reason = await admin('POST', `/companies/${t.company.id}/gain-reasons`, { name: 'Fit' });
    await db.query('insert into crm.deal_gain_reasons (deal_id, reason_id, company_id, position) values ($1, $2, $3, 1)', [
      deal.id,
      reason.body.id,
      t.company.id,
    ]);
    await db.query(`update crm.deals set won_reason_description = 'Fit' where id = $1`, [deal.id]);
    await ok(deal.id, { status: 1 });
    expect(await deals.detail(deal.id)).to.include({ status: 1, won_date: null, lost_date: null, won_reason_description: null });
    expect((await db.query('select * from crm.deal_gain_reasons where deal_id = $1', [deal.id])).rows).to.deep.equal([]);
  });

  it('crm_lead_source_id and lead_source {name} set the origin shown as deal_source; marketing corrects the acquisition', async () => {
    const deal = await deals.created({ marketing: { svc_campaign: 'Spring' } });
    await ok(deal.id, { crm_lead_source_id: ref.source.id });
    expect((await deals.detail(deal.id)).deal_source).to.deep.equal({ id: ref.source.id, name: 'Referral', logo: null });
    await ok(deal.id, { lead_source: { name: 'Brand New Source' } });
    expect((await deals.detail(deal.id)).deal_source.name).to.equal('Brand New Source');
    await ok(deal.id, { marketing: { svc_campaign: 'Summer', svc_ad_set: 'A' } });
    const d = await deals.detail(deal.id);
    expect(d.marketing_lead_source).to.include({ campaing_name: 'Summer', ad_set_name: 'A' });
    const acquisitions = await db.query('select count(*)::int n from crm.marketing_acquisitions where deal_id = $1', [deal.id]);
    expect(acquisitions.rows[0].n).to.equal(1);
    expect400(await deals.put(deal.id, { title: 'x', crm_lead_source_id: randomUUID() }), 'crm_lead_source_id');
  });

  describe('refusals: a 400 naming the field writes nothing; access and tenancy', () => {
    const refusals: [string, Record<string, unknown>, string][] = [
      ['no title', { title: undefined }, 'title'],
      ['a title of 151 characters', { title: 'x'.repeat(151) }, 'title'],
      ['an unknown field', { lead_source_id: randomUUID() }, 'lead_source_id'],
      ['visibility 3', { visibility: 3 }, 'visibility'],
      ['status 4', { status: 4 }, 'status'],
      ['a negative value', { value: -1 }, 'value'],
      ['a temperature of 1.5', { temperature: 1.5 }, 'temperature'],
      ['a malformed expected_close_date', { expected_close_date: 'soon' }, 'expected_close_date'],
      ['a quality_rating of 6', { quality_rating: 6 }, 'quality_rating'],
    ];
    for (const [what, body, field] of refusals) {
      it(`refuses ${what} with a 400 naming ${field}`, async () => {
        const deal = await deals.created({ title: 'Stays', value: 7 });
        const before = await dealRow(deal.id);
        expect400(await deals.put(deal.id, { title: 'Changed', value: 8, ...body }), field);
        expect(await dealRow(deal.id)).to.deep.equal(before);
      });
    }
    it('refuses another company`s stage or responsible, with nothing changed', async () => {
      const deal = await deals.created({ title: 'Stays' });
      const before = await dealRow(deal.id);
      expect400(await deals.put(deal.id, { title: 'x', stage_id: other.pipeline.stages[0].id }), 'stage_id');
      expect400(await deals.put(deal.id, { title: 'x', responsible_id: other.user.id }), 'responsible_id');
      expect(await dealRow(deal.id)).to.deep.equal(before);
      expect(await eventsOf(deal.id)).to.deep.equal(['deal.created']);
    });
    it('another company`s deal is a 404; a deal hidden from the key creator a 403 (a follower may); without crm/deal.update a 403', async () => {
      const deal = await deals.created({ title: 'Private' });
      expect((await deals.put(deal.id, { title: 'x' }, other.key.key)).status).to.equal(404);
      expect((await deals.put(deal.code, { title: 'x' }, other.key.key)).status).to.equal(404);
      const colleagueKey = (
        await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: ref.colleague.id, permissions: ['*'] })
      ).body.key;
      const hidden = await deals.put(deal.id, { title: 'x' }, colleagueKey);
      expect(hidden.status, hidden.text).to.equal(403);
      expect(hidden.body).to.include({ statusCode: 403, error: 'Forbidden' });
      const followed = await deals.created({ title: 'Followed', followers: [{ user_id: ref.colleague.id }] });
      expect((await deals.put(followed.id, { title: 'By the follower' }, colleagueKey)).status).to.equal(200);
      const readOnly = (
        await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/deal.read'] })
      ).body.key;
      expect((await deals.put(deal.id, { title: 'x' }, readOnly)).status).to.equal(403);
      expect((await deals.put('999999', { title: 'x' })).status).to.equal(404);
      expect((await deals.put(randomUUID(), { title: 'x' })).status).to.equal(404);
      expect((await dealRow(deal.id)).title).to.equal('Private');
    });
    it('a PUT that changes nothing keeps updated_at and writes no event', async () => {
      const deal = await deals.created({
        title: 'Same',
        value: 3,
        tags: [ref.hot.id],
        persons_id: [ref.ana.id],
        custom_fields: [{ id: ref.size.id, value: '7' }],
      });
      const before = (await dealRow(deal.id)).updated_at;
      const res = await deals.put(deal.id, {
        title: 'Same',
        value: 3,
        status: 1,
        tags: [ref.hot.id],
        persons_id: [{ person_id: ref.ana.id }],
        custom_fields: [{ id: ref.size.id, value: ' 7 ' }],
        email: 'ana@example.test',
      });
      expect(res.status, res.text).to.equal(200);
      expect((await dealRow(deal.id)).updated_at).to.deep.equal(before);
      expect(await eventsOf(deal.id)).to.deep.equal(['deal.created']);
    });
  });

  describe('events seen by a real receiver', () => {
    it('deal.updated carries the full DealSnapshot, equal to the detail; body tags fire no tag event', async () => {
      const deal = await deals.created({ title: 'Evented' });
      await ok(deal.id, { title: 'Evented again', value: 99, tags: [ref.vip.id], persons_id: [{ person_id: ref.bruno.id }] });
      const updated = await delivered(deal.id, 'deal.updated');
      expect(updated).to.include.all.keys(...DEAL_SNAPSHOT_FIELDS);
      expect(updated).to.include({ id: deal.id, title: 'Evented again', value: 99 });
      expect(withoutChanges(updated)).to.deep.equal(withoutDetailExtras(await deals.detail(deal.id)));
      expect(await eventsOf(deal.id)).to.deep.equal(['deal.created', 'deal.updated']);
    });
    it('a stage change fires deal.stage_changed and deal.updated', async () => {
      const deal = await deals.created({ title: 'Moving' });
      await ok(deal.id, { title: 'Moving', stage_id: t.pipeline.stages[2].id });
      const changed = await delivered(deal.id, 'deal.stage_changed');
      expect(changed.previous_stage).to.deep.equal({
        id: t.pipeline.stages[0].id,
        name: 'New',
        pipeline: { id: t.pipeline.id, name: 'Sales' },
      });
      expect(changed.current_stage).to.deep.equal({
        id: t.pipeline.stages[2].id,
        name: 'Proposal',
        pipeline: { id: t.pipeline.id, name: 'Sales' },
      });
      expect(changed.deal).to.include.all.keys(...DEAL_SNAPSHOT_FIELDS);
      expect(changed.deal.stage.id).to.equal(t.pipeline.stages[2].id);
      expect((await delivered(deal.id, 'deal.updated')).stage.id).to.equal(t.pipeline.stages[2].id);
      expect(await eventsOf(deal.id)).to.deep.equal(['deal.created', 'deal.stage_changed', 'deal.updated']);
    });
    it('a status change fires only deal.updated (no deal.won or deal.lost)', async () => {
      const deal = await deals.created({ title: 'Status' });
      await ok(deal.id, { title: 'Status', status: 2 });
      expect((await delivered(deal.id, 'deal.updated')).status).to.equal(2);
      await ok(deal.id, { title: 'Status', status: 3 });
      expect((await delivered(deal.id, 'deal.updated', 2)).status).to.equal(3);
      expect(await eventsOf(deal.id)).to.deep.equal(['deal.created', 'deal.updated', 'deal.updated']);
      expect(receiver.received.filter((r) => ['deal.won', 'deal.lost'].includes(r.body.event_key))).to.deep.equal([]);
    });
    it('custom fields and quality: deal.custom_field_updated, deal.custom_field_removed, deal.quality_updated', async () => {
      const deal = await deals.created({ title: 'Fields', custom_fields: [{ id: ref.size.id, value: '1' }], quality_rating: 2 });
      await ok(deal.id, {
        title: 'Fields',
        custom_fields: [
          { id: ref.size.id, value: null },
          { id: ref.segment.id, option_id: ref.segment.options[1].id },
        ],
        quality_rating: 5,
      });
      const updated = await delivered(deal.id, 'deal.custom_field_updated');
      expect(updated.custom_fields_changed.map((f: any) => [f.field_id, f.previous_answers])).to.deep.equal([[ref.segment.id, []]]);
      expect(updated.custom_fields_changed[0].answers[0]).to.include({ option_value: 'Enterprise' });
      const removed = await delivered(deal.id, 'deal.custom_field_removed');
      expect(removed.removed_fields.map((f: any) => f.field_id)).to.deep.equal([ref.size.id]);
      expect(removed.removed_fields[0].previous_answers[0]).to.include({ value: '1' });
      expect(await delivered(deal.id, 'deal.quality_updated')).to.include({ previous_quality: 2, new_quality: 5 });
      expect(await eventsOf(deal.id)).to.deep.equal([
        'deal.created',
        'deal.custom_field_updated',
        'deal.custom_field_removed',
        'deal.quality_updated',
        'deal.updated',
      ]);
    });
  });
});
