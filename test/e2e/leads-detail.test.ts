import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

/** Every field of the spec's Lead detail table, in the shape it gives. */
const DETAIL_FIELDS = [
  'id',
  'code',
  'title',
  'measurement_consent',
  'created_by',
  'responsible',
  'stage',
  'pipeline_stages',
  'lead_source',
  'marketing_lead_source',
  'quality_rating',
  'quality_reason',
  'won_date',
  'lost_date',
  'created_at',
  'archived_at',
  'last_activity_at',
  'crm_loss_reason',
  'crm_loss_reasons',
  'lost_reason_description',
  'visibility',
  'negotiation_mode',
  'participants',
  'organization',
  'custom_fields',
  'tags',
  'stage_durations',
  'value',
  'views_count',
  'associations_count',
  'proposals',
  'followers',
  'icp',
  'icps',
  'partners',
  'has_channel_chat',
  'channel_chats',
  'has_whatsapp_chat',
  'whatsapp_chats',
  'score',
  'score_criteria_count',
  'score_updated_at',
  'valuation',
  'qualification_metric',
  'projection_context',
  'deals',
];

describe('GET /integrations/external/leads/{id}: the whole detail, visibility and views', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let t: Tenant;
  let colleague: { id: string };
  let colleagueKey: string;
  let masterKey: string;

  const keyFor = async (userId: string, permissions: string[]) => {
    const res = await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: userId, permissions });
    expect(res.status, res.text).to.equal(201);
    return res.body.key as string;
  };
  const create = async (body: Record<string, unknown>, token = t.key.key) => {
    const res = await call('POST', '/integrations/external/leads', { token, body: { title: 'Lead', ...body } });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number };
  };
  const get = (ref: string | number, token = t.key.key) => call('GET', `/integrations/external/leads/${ref}`, { token });

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    t = await seedTenant(call, stack.adminToken);
    colleague = (await admin('POST', `/companies/${t.company.id}/users`, { name: 'Colleague', email: `c-${randomUUID()}@example.test` }))
      .body;
    colleagueKey = await keyFor(colleague.id, ['crm/lead.read', 'crm/lead.create']);
    masterKey = await keyFor(t.master.id, ['crm/lead.read']);
  });
  after(() => stack?.stop());

  it('has every field of the Lead detail table with its shape, empty arrays and nulls where there is nothing', async () => {
    const lead = await create({ title: 'Bare' });
    const res = await get(lead.id);
    expect(res.status, res.text).to.equal(200);
    const d = res.body;
    expect(d).to.include.all.keys(...DETAIL_FIELDS);
    for (const list of ['pipeline_stages', 'participants', 'custom_fields', 'tags', 'proposals', 'followers', 'icps', 'partners']) {
      expect(d[list], list).to.be.an('array');
    }
    for (const empty of [
      'crm_loss_reasons',
      'participants',
      'custom_fields',
      'tags',
      'proposals',
      'followers',
      'icps',
      'partners',
      'deals',
    ]) {
      expect(d[empty], empty).to.deep.equal([]);
    }
    for (const none of [
      'lead_source',
      'marketing_lead_source',
      'quality_rating',
      'quality_reason',
      'won_date',
      'lost_date',
      'archived_at',
      'last_activity_at',
      'crm_loss_reason',
      'lost_reason_description',
      'organization',
      'value',
      'icp',
      'score',
      'score_criteria_count',
      'score_updated_at',
      'negotiation_mode',
    ]) {
      expect(d[none], none).to.equal(null);
    }
    expect(d.stage).to.have.all.keys('id', 'name', 'pipeline');
    expect(d.stage.pipeline).to.have.all.keys('id', 'name');
    expect(d.pipeline_stages).to.deep.equal(t.pipeline.stages);
    expect(d.created_by).to.have.all.keys('id', 'name', 'avatar');
    expect(d.associations_count).to.deep.equal({
      items: 0,
      tasks: 0,
      qualifications: 0,
      notes: 0,
      files: 0,
      activities: 0,
      proposals: 0,
      deals: 0,
    });
    expect(d.stage_durations).to.have.length(1);
    expect(d.stage_durations[0]).to.have.all.keys('stage_id', 'stage_name', 'total_seconds', 'human_readable');
    expect(d.stage_durations[0]).to.include({ stage_id: t.pipeline.stages[0].id, stage_name: 'New' });
    expect(d.stage_durations[0].total_seconds).to.be.a('number').and.to.be.at.least(0);
    expect(d.valuation).to.include({ mode: 'CURRENT', source: 'LEGACY_CURRENT_VALUE', current_value: null, has_recurring_value: false });
    expect(d.projection_context).to.deep.equal({ indefinite_horizon_months: 12, display_mode: 'CURRENT' });
    expect(d.qualification_metric).to.equal('quality_rating');
    expect(d.views_count).to.equal(1);
    expect(d.visibility).to.equal(0);
  });

  describe('chats', () => {
    it('without crm/chats.read the chat flags are false and the lists empty', async () => {
      const lead = await create({ title: 'Chats' });
      const d = (await get(lead.id, await keyFor(t.user.id, ['crm/lead.read']))).body;
      expect([d.has_channel_chat, d.has_whatsapp_chat, d.channel_chats, d.whatsapp_chats]).to.deep.equal([false, false, [], []]);
    });
    it('with it, too, until the chat service supplies summaries (none are invented)', async () => {
      const lead = await create({ title: 'Chats 2' });
      const d = (await get(lead.id, await keyFor(t.user.id, ['crm/lead.read', 'crm/chats.read']))).body;
      expect([d.has_channel_chat, d.has_whatsapp_chat, d.channel_chats, d.whatsapp_chats]).to.deep.equal([false, false, [], []]);
    });
  });

  describe('visibility of the key creator', () => {
    it("a private lead is 403 to another user's key, and the refused GET records no view", async () => {
      const lead = await create({ title: 'Private' });
      const res = await get(lead.id, colleagueKey);
      expect(res.status, res.text).to.equal(403);
      expect(res.body).to.include({ statusCode: 403, error: 'Forbidden' });
      expect((await get(lead.code, colleagueKey)).status).to.equal(403);
      expect((await get(lead.id)).body.views_count).to.equal(1);
    });
    it('a lead visible to the team (visibility 1) is readable by every user of the company', async () => {
      const lead = await create({ title: 'Team', visibility: 1 });
      expect((await get(lead.id, colleagueKey)).status).to.equal(200);
    });
    it('the responsible, a follower and the master user see a private lead', async () => {
      const asResponsible = await create({ title: 'Theirs', responsible_id: colleague.id });
      expect((await get(asResponsible.id, colleagueKey)).status).to.equal(200);
      const followed = await create({ title: 'Followed', followers: [{ user_id: colleague.id }] });
      expect((await get(followed.id, colleagueKey)).status).to.equal(200);
      const plain = await create({ title: 'Master sees' });
      expect((await get(plain.id, masterKey)).status).to.equal(200);
    });
    it('the other user`s own private lead is hidden from the first key creator', async () => {
      const lead = await create({ title: 'Colleague private' }, colleagueKey);
      expect((await get(lead.id)).status).to.equal(403);
      expect((await get(lead.id, colleagueKey)).status).to.equal(200);
    });
  });

  it('counts views per call and shows the time per stage after a move', async () => {
    const lead = await create({ title: 'Moved' });
    await get(lead.id);
    const moved = await admin('POST', `/companies/${t.company.id}/leads/${lead.id}/move`, {
      user_id: t.user.id,
      stage_id: t.pipeline.stages[2].id,
    });
    expect(moved.status, moved.text).to.equal(200);
    const d = (await get(lead.code)).body;
    expect(d.views_count).to.equal(2);
    expect(d.stage.id).to.equal(t.pipeline.stages[2].id);
    expect(d.stage_durations.map((s: any) => s.stage_name)).to.deep.equal(['New', 'Proposal']);
  });

  it('needs crm/lead.read (403) and answers another company`s lead with 404', async () => {
    const lead = await create({ title: 'Perm' });
    expect((await get(lead.id, await keyFor(t.user.id, ['crm/lead.create']))).status).to.equal(403);
    const other = await seedTenant(call, stack.adminToken);
    expect((await get(lead.id, other.key.key)).status).to.equal(404);
  });
});
