import { expect } from 'chai';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { withoutChanges } from '../support/post-sale.js';
import { expect400, LEAD_SNAPSHOT_FIELDS, salesEventKeys } from '../support/sales.js';
import { type SalesEventsStack, salesEventsStack, stageSummaryOf } from '../support/sales-events.js';

const NO_SUCH = '00000000-0000-7000-8000-000000000000';

/** Every deal.* event the admin API's deal actions fire, seen by a real receiver through the outbox, JetStream and webhooks. */
describe('deal events: the dedicated deal actions and a lead won with a deal, delivered with their payloads', () => {
  let s: SalesEventsStack;
  let t: Tenant;
  let other: Tenant;
  const ref: Record<string, any> = {};

  const createDeal = (body: Record<string, unknown> = {}) => s.create('deal', body);
  const createLead = (body: Record<string, unknown> = {}) => s.create('lead', body);
  const act = (method: string, path: string, body?: unknown, tenant = t) => s.act(method, path, body, tenant.company.id);
  const action = (method: string, path: string, body?: unknown) => s.action(method, path, body);
  const dealDetail = (id: string) => s.snapshotOf('deal', id);
  const leadDetail = (id: string) => s.detail('lead', id);
  const expectDeal = (deal: any, id: string) => s.expectSnapshot('deal', deal, id);

  before(async () => {
    s = await salesEventsStack([...salesEventKeys('deal'), ...salesEventKeys('lead')]);
    t = s.t;
    other = await seedTenant(s.call, s.stack.adminToken);
    const make = async (path: string, body: unknown, tenant = t) => {
      const res = await act('POST', path, body, tenant);
      expect(res.status, res.text).to.equal(201);
      return res.body;
    };
    ref.budget = await make('gain-reasons', { name: 'Budget' });
    ref.fit = await make('gain-reasons', { name: 'Fit' });
    ref.price = await make('loss-reasons', { name: 'Price' });
    ref.timing = await make('loss-reasons', { name: 'Timing' });
    ref.otherGain = await make('gain-reasons', { name: 'Elsewhere' }, other);
    ref.hot = await make('tags', { name: 'Hot', color: { background: '#f00', foreground: '#fff' } });
    ref.vip = await make('tags', { name: 'VIP' });
    ref.foreignTag = await make('tags', { name: 'Foreign' }, other);
    ref.size = await make('custom-fields', { entity: 'deal', name: 'Size', type: 'number' });
    ref.segment = await make('custom-fields', { entity: 'deal', name: 'Segment', type: 'select', options: ['SMB', 'Enterprise'] });
    ref.leadField = await make('custom-fields', { entity: 'lead', name: 'Lead only', type: 'text' });
    ref.strict = await make('pipelines', {
      name: 'Strict',
      requires_quality_reason: true,
      stages: [{ name: 'Open' }, { name: 'Closing' }],
    });
  });
  after(() => s?.close());

  it('gain reasons are a per-company catalog of the admin API: {id, name}, 201, a blank name is a 400', async () => {
    expect(ref.budget).to.have.keys('id', 'name');
    expect(ref.budget.name).to.equal('Budget');
    expect400(await act('POST', 'gain-reasons', { name: '  ' }), 'name');
    expect((await act('POST', 'gain-reasons', { name: 'X' }, { company: { id: NO_SUCH } } as Tenant)).status).to.equal(404);
  });

  it('win: deal.won with won_date, won_by, customer_id null (no person or organization), the gain reasons in order and the description; then deal.updated', async () => {
    const deal = await createDeal({ value: 500 });
    const answer = await action('POST', `deals/${deal.id}/win`, {
      user_id: t.master.id,
      gain_reason_ids: [ref.fit.id, ref.budget.id],
      description: '  Signed today ',
    });
    expect(answer).to.include({ id: deal.id, status: 2, won_reason_description: 'Signed today' });
    const won = await s.one(deal.id, 'deal.won');
    expect(won).to.have.all.keys(
      'deal',
      'won_date',
      'won_by',
      'customer_id',
      'gain_reason',
      'gain_reasons',
      'won_reason_description',
      'changes',
    );
    expectDeal(won.deal, deal.id);
    expect(won.won_by).to.deep.equal({ id: t.master.id, name: 'Master', avatar: null });
    expect(won.customer_id).to.equal(null);
    expect(won.gain_reason).to.deep.equal(ref.fit);
    expect(won.gain_reasons).to.deep.equal([ref.fit, ref.budget]);
    expect(won.won_reason_description).to.equal('Signed today');
    expect(won.won_date).to.equal(won.deal.won_date).and.to.be.a('string');
    expect(won.deal).to.include({ status: 2, lost_date: null, won_reason_description: 'Signed today' });
    expect(won.deal.crm_gain_reason).to.deep.equal(won.gain_reason);
    expect(won.deal.crm_gain_reasons).to.deep.equal(won.gain_reasons);
    const updated = withoutChanges(await s.one(deal.id, 'deal.updated'));
    expectDeal(updated, deal.id);
    expect(updated).to.deep.equal(won.deal);
    expect(await dealDetail(deal.id)).to.deep.equal(updated);
    await s.expectExactly('deal', deal.id, { 'deal.created': 1, 'deal.won': 1, 'deal.updated': 1 });
  });

  it('lose after a win: deal.lost with lost_date, lost_by, the loss reasons and description; the gain reasons are cleared', async () => {
    const deal = await createDeal();
    await action('POST', `deals/${deal.code}/win`, { user_id: t.user.id, gain_reason_ids: [ref.budget.id], description: 'Won' });
    await s.one(deal.id, 'deal.won');
    await action('POST', `deals/${deal.id}/lose`, {
      user_id: t.user.id,
      loss_reason_ids: [ref.timing.id, ref.price.id],
      description: 'Too late',
    });
    const lost = await s.one(deal.id, 'deal.lost');
    expect(lost).to.have.all.keys('deal', 'lost_date', 'lost_by', 'loss_reason', 'loss_reasons', 'loss_reason_description', 'changes');
    expectDeal(lost.deal, deal.id);
    expect(lost.lost_by).to.deep.equal({ id: t.user.id, name: 'Integrator', avatar: null });
    expect(lost.loss_reason).to.deep.equal(ref.timing);
    expect(lost.loss_reasons).to.deep.equal([ref.timing, ref.price]);
    expect(lost.loss_reason_description).to.equal('Too late');
    expect(lost.lost_date).to.equal(lost.deal.lost_date).and.to.be.a('string');
    expect(lost.deal).to.include({
      status: 3,
      won_date: null,
      lost_reason_description: 'Too late',
      won_reason_description: null,
      crm_gain_reason: null,
    });
    expect(lost.deal.crm_gain_reasons).to.deep.equal([]);
    expect(lost.deal.crm_loss_reasons).to.deep.equal(lost.loss_reasons);
    expect((await s.one(deal.id, 'deal.updated', 2)).status).to.equal(3);
    expect(await dealDetail(deal.id)).to.deep.equal(lost.deal);
  });

  it('move: deal.stage_changed with the previous and current StageSummary, then deal.updated; the same stage again fires nothing', async () => {
    const deal = await createDeal();
    await action('POST', `deals/${deal.id}/move`, { user_id: t.user.id, stage_id: ref.strict.stages[1].id });
    const changed = await s.one(deal.id, 'deal.stage_changed');
    expect(changed).to.have.all.keys('previous_stage', 'current_stage', 'deal', 'changes');
    expect(changed.previous_stage).to.deep.equal(stageSummaryOf(t.pipeline, 0));
    expect(changed.current_stage).to.deep.equal(stageSummaryOf(ref.strict, 1));
    expect(changed.current_stage.name).to.equal('Closing');
    expectDeal(changed.deal, deal.id);
    const updated = await s.one(deal.id, 'deal.updated');
    expect(updated.stage).to.deep.equal(changed.current_stage);
    const detail = await s.call('GET', `/integrations/external/deals/${deal.id}`, { token: t.key.key });
    expect(detail.body.pipeline_stages.map((s: any) => s.name)).to.deep.equal(['Open', 'Closing']);
    const again = await action('POST', `deals/${deal.id}/move`, { user_id: t.user.id, stage_id: ref.strict.stages[1].id });
    expect(again.updated_at).to.equal(updated.updated_at);
    await s.expectExactly('deal', deal.id, { 'deal.created': 1, 'deal.stage_changed': 1, 'deal.updated': 1 });
  });

  it('quality: deal.quality_updated with the previous and new qualification; the pipeline`s reason rule applies', async () => {
    const deal = await createDeal({ quality_rating: 2, quality_reason: 'Cold', stage_id: ref.strict.stages[0].id });
    expect400(await act('PUT', `deals/${deal.id}/quality`, { user_id: t.user.id, quality_rating: 4 }), 'quality_reason');
    await action('PUT', `deals/${deal.id}/quality`, { user_id: t.user.id, quality_rating: 4, quality_reason: 'Warm' });
    const q = await s.one(deal.id, 'deal.quality_updated');
    expect(q).to.deep.include({ previous_quality: 2, previous_quality_reason: 'Cold', new_quality: 4, new_quality_reason: 'Warm' });
    expectDeal(q.deal, deal.id);
    expect(q.deal).to.include({ quality_rating: 4, quality_reason: 'Warm' });
    expect((await s.one(deal.id, 'deal.updated')).quality_rating).to.equal(4);
    await s.expectExactly('deal', deal.id, { 'deal.created': 1, 'deal.quality_updated': 1, 'deal.updated': 1 });
  });

  it('tags: deal.tag_added with only the tags not already on the deal, deal.tag_removed with the tag removed', async () => {
    const deal = await createDeal({ tags: [ref.hot.id] });
    await s.one(deal.id, 'deal.created');
    await action('POST', `deals/${deal.id}/tags`, { user_id: t.user.id, tag_ids: [ref.hot.id, ref.vip.id, ref.vip.id] });
    const added = await s.one(deal.id, 'deal.tag_added');
    expect(added).to.have.all.keys('deal', 'added_tags', 'changes');
    expect(added.added_tags).to.deep.equal([{ ...ref.vip, color: { background: null, foreground: null } }]);
    expectDeal(added.deal, deal.id);
    expect(added.deal.tags.map((x: any) => x.name)).to.deep.equal(['Hot', 'VIP']);
    expect((await s.one(deal.id, 'deal.updated')).tags).to.deep.equal(added.deal.tags);

    const again = await action('POST', `deals/${deal.id}/tags`, { user_id: t.user.id, tag_ids: [ref.vip.id] });
    expect(again.updated_at).to.equal(added.deal.updated_at);

    await action('DELETE', `deals/${deal.code}/tags/${ref.hot.id}?user_id=${t.user.id}`);
    const removed = await s.one(deal.id, 'deal.tag_removed');
    expect(removed).to.have.all.keys('deal', 'removed_tags', 'changes');
    expect(removed.removed_tags).to.deep.equal([ref.hot]);
    expect(removed.deal.tags.map((x: any) => x.name)).to.deep.equal(['VIP']);
    expect(await dealDetail(deal.id)).to.deep.equal(removed.deal);
    await s.expectExactly('deal', deal.id, { 'deal.created': 1, 'deal.tag_added': 1, 'deal.tag_removed': 1, 'deal.updated': 2 });
  });

  it('tags sent in POST /deals and PUT /deals fire no tag events; the snapshots of created and updated show them', async () => {
    const deal = await createDeal({ tags: [ref.hot.id, ref.vip.id] });
    const created = await s.one(deal.id, 'deal.created');
    expect(created.deal.tags.map((x: any) => x.name)).to.deep.equal(['Hot', 'VIP']);
    const put = await s.call('PUT', `/integrations/external/deals/${deal.id}`, {
      token: t.key.key,
      body: { title: 'Evented', tags: [ref.vip.id] },
    });
    expect(put.status, put.text).to.equal(200);
    expect((await s.one(deal.id, 'deal.updated')).tags.map((x: any) => x.name)).to.deep.equal(['VIP']);
    await s.expectExactly('deal', deal.id, { 'deal.created': 1, 'deal.updated': 1 });
  });

  it('custom fields: deal.custom_field_updated with the previous answers, deal.custom_field_removed with what the field held', async () => {
    const deal = await createDeal({ custom_fields: [{ id: ref.size.id, value: '3' }] });
    await action('PUT', `deals/${deal.id}/custom-fields/${ref.size.id}`, { user_id: t.user.id, value: 30 });
    const updated = await s.one(deal.id, 'deal.custom_field_updated');
    expect(updated).to.have.all.keys('deal', 'custom_fields_changed', 'changes');
    expect(updated.custom_fields_changed).to.have.length(1);
    expect(updated.custom_fields_changed[0]).to.deep.include({ field_id: ref.size.id, field_name: 'Size', field_type: 2 });
    expect(updated.custom_fields_changed[0].previous_answers.map((a: any) => a.value)).to.deep.equal(['3']);
    expect(updated.custom_fields_changed[0].answers.map((a: any) => a.value)).to.deep.equal(['30']);
    expectDeal(updated.deal, deal.id);

    await action('PUT', `deals/${deal.id}/custom-fields/${ref.segment.id}`, { user_id: t.user.id, option_id: ref.segment.options[1].id });
    const selected = await s.one(deal.id, 'deal.custom_field_updated', 2);
    expect(selected.custom_fields_changed[0]).to.deep.include({ field_id: ref.segment.id, previous_answers: [] });
    expect(selected.custom_fields_changed[0].answers[0]).to.include({ option_id: ref.segment.options[1].id, option_value: 'Enterprise' });
    const same = await action('PUT', `deals/${deal.id}/custom-fields/${ref.segment.id}`, {
      user_id: t.user.id,
      option_id: ref.segment.options[1].id,
    });
    expect(same.updated_at).to.equal(selected.deal.updated_at);

    await action('DELETE', `deals/${deal.id}/custom-fields/${ref.size.id}?user_id=${t.user.id}`);
    const removed = await s.one(deal.id, 'deal.custom_field_removed');
    expect(removed).to.have.all.keys('deal', 'removed_fields', 'changes');
    expect(removed.removed_fields).to.have.length(1);
    expect(removed.removed_fields[0]).to.deep.include({ field_id: ref.size.id, field_name: 'Size', field_type: 2 });
    expect(removed.removed_fields[0].previous_answers.map((a: any) => a.value)).to.deep.equal(['30']);
    expect(removed.deal.custom_fields.map((f: any) => f.field_id)).to.deep.equal([ref.segment.id]);
    expect(await dealDetail(deal.id)).to.deep.equal(removed.deal);
    await s.expectExactly('deal', deal.id, {
      'deal.created': 1,
      'deal.custom_field_updated': 2,
      'deal.custom_field_removed': 1,
      'deal.updated': 3,
    });
  });

  it('each invalid action is a 400 naming the field and changes nothing; another company`s deal is a 404', async () => {
    const deal = await createDeal();
    const before = await dealDetail(deal.id);
    const bad = async (method: string, path: string, body: unknown, field: string) =>
      expect400(await act(method, `deals/${deal.id}/${path}`, body), field);
    await bad('POST', 'win', { user_id: NO_SUCH }, 'user_id');
    await bad('POST', 'win', { user_id: other.master.id }, 'user_id');
    await bad('POST', 'win', { user_id: 'me' }, 'user_id');
    await bad('POST', 'win', {}, 'user_id');
    await bad('POST', 'win', { user_id: t.user.id, gain_reason_ids: [ref.budget.id, NO_SUCH] }, 'gain_reason_ids[1]');
    await bad('POST', 'win', { user_id: t.user.id, gain_reason_ids: [ref.price.id] }, 'gain_reason_ids[0]');
    await bad('POST', 'win', { user_id: t.user.id, gain_reason_ids: [ref.otherGain.id] }, 'gain_reason_ids[0]');
    await bad('POST', 'win', { user_id: t.user.id, won: true }, 'won');
    await bad('POST', 'lose', { user_id: t.user.id, loss_reason_ids: [ref.budget.id] }, 'loss_reason_ids[0]');
    await bad('POST', 'lose', { user_id: t.user.id, description: 'x'.repeat(2001) }, 'description');
    await bad('POST', 'move', { user_id: t.user.id, stage_id: NO_SUCH }, 'stage_id');
    await bad('POST', 'move', { user_id: t.user.id, stage_id: other.pipeline.stages[1].id }, 'stage_id');
    await bad('POST', 'move', { user_id: t.user.id }, 'stage_id');
    await bad('PUT', 'quality', { user_id: t.user.id, quality_rating: 9 }, 'quality_rating');
    await bad('PUT', 'quality', { user_id: t.user.id }, 'quality_rating');
    await bad('POST', 'tags', { user_id: t.user.id, tag_ids: [ref.hot.id, NO_SUCH] }, 'tag_ids[1]');
    await bad('POST', 'tags', { user_id: t.user.id, tag_ids: [ref.foreignTag.id] }, 'tag_ids[0]');
    await bad('POST', 'tags', { user_id: t.user.id, tag_ids: [] }, 'tag_ids');
    await bad('DELETE', `tags/${ref.hot.id}`, undefined, 'user_id');
    await bad('PUT', `custom-fields/${NO_SUCH}`, { user_id: t.user.id, value: '1' }, 'field_id');
    await bad('PUT', `custom-fields/${ref.leadField.id}`, { user_id: t.user.id, value: 'x' }, 'field_id');
    await bad('PUT', `custom-fields/${ref.size.id}`, { user_id: t.user.id, value: 'many' }, 'value');
    await bad('PUT', `custom-fields/${ref.size.id}`, { user_id: t.user.id }, 'value');
    await bad('PUT', `custom-fields/${ref.segment.id}`, { user_id: t.user.id, option_id: NO_SUCH }, 'option_id');
    const notCarried = await act('DELETE', `deals/${deal.id}/tags/${ref.hot.id}?user_id=${t.user.id}`);
    expect(notCarried.status, notCarried.text).to.equal(404);
    const unanswered = await act('DELETE', `deals/${deal.id}/custom-fields/${ref.size.id}?user_id=${t.user.id}`);
    expect(unanswered.status, unanswered.text).to.equal(404);
    expect(await dealDetail(deal.id)).to.deep.equal(before);

    const theirs = { company: other.company } as Tenant;
    for (const [method, path, body] of [
      ['POST', 'win', { user_id: other.master.id }],
      ['POST', 'lose', { user_id: other.master.id }],
      ['POST', 'move', { user_id: other.master.id, stage_id: other.pipeline.stages[1].id }],
      ['PUT', 'quality', { user_id: other.master.id, quality_rating: 3 }],
      ['POST', 'tags', { user_id: other.master.id, tag_ids: [ref.foreignTag.id] }],
      ['DELETE', `tags/${ref.hot.id}?user_id=${other.master.id}`, undefined],
      ['PUT', `custom-fields/${ref.size.id}`, { user_id: other.master.id, value: '1' }],
      ['DELETE', `custom-fields/${ref.size.id}?user_id=${other.master.id}`, undefined],
    ] as const) {
      for (const id of [deal.id, deal.code]) {
        const res = await act(method, `deals/${id}/${path}`, body, theirs);
        expect(res.status, `${path} ${res.text}`).to.equal(404);
        expect(res.body).to.include({ statusCode: 404, error: 'Not Found' });
      }
    }
    expect((await act('POST', `deals/${NO_SUCH}/win`, { user_id: t.user.id })).status).to.equal(404);
    expect((await act('POST', 'deals/abc/win', { user_id: t.user.id })).status).to.equal(404);
    expect(await dealDetail(deal.id)).to.deep.equal(before);
    await s.expectExactly('deal', deal.id, { 'deal.created': 1 });
  });

  it('the admin token is required: an integration key on a deal action is a 401', async () => {
    const deal = await createDeal();
    const res = await s.call('POST', `/admin/v1/companies/${t.company.id}/deals/${deal.id}/win`, {
      token: t.key.key,
      body: { user_id: t.user.id },
    });
    expect(res.status, res.text).to.equal(401);
  });

  describe('a lead won with a deal', () => {
    it('fires deal.created and lead.won carrying the DealSnapshot; the deal points at the lead and the lead lists it', async () => {
      const source = (await act('POST', 'lead-sources', { name: 'Fair' })).body;
      const lead = await createLead({
        visibility: 1,
        crm_lead_source_id: source.id,
        responsible_id: t.user.id,
        measurement_consent: 'DENIED',
        organization: { name: 'Acme' },
        stage_id: t.pipeline.stages[2].id,
      });
      const answer = await action('POST', `leads/${lead.id}/win`, { user_id: t.master.id, deal: { title: '  Acme contract ' } });
      expect(answer).to.include({ id: lead.id, status: 2 });
      expect(answer.deals).to.have.length(1);

      const won = await s.one(lead.id, 'lead.won');
      expect(won).to.have.all.keys('lead', 'won_date', 'won_by', 'deal', 'changes');
      expect(won.lead).to.include.all.keys(...LEAD_SNAPSHOT_FIELDS);
      expect(won.won_by).to.deep.equal({ id: t.master.id, name: 'Master', avatar: null });
      const deal = won.deal;
      expectDeal(deal, deal.id);
      expect(deal).to.include({
        title: 'Acme contract',
        status: 1,
        value: null,
        visibility: 1,
        measurement_consent: 'DENIED',
        quality_rating: null,
      });
      expect(deal.lead).to.deep.equal({ id: lead.id, code: lead.code, title: 'Evented' });
      expect(deal.stage).to.deep.equal(stageSummaryOf(t.pipeline, 0));
      expect(deal.responsible.id).to.equal(t.user.id);
      expect(deal.created_by.id).to.equal(t.master.id);
      expect(deal.organization).to.deep.include({ name: 'Acme' });
      expect(deal.organization).to.deep.equal(won.lead.organization);
      expect(deal).to.deep.include({ tags: [], participants: [], custom_fields: [], followers: [] });
      expect(deal.deal_source).to.include({ id: source.id, name: 'Fair' });

      const created = await s.one(deal.id, 'deal.created');
      expect(created.deal).to.deep.equal(deal);
      expect(await dealDetail(deal.id)).to.deep.equal(deal);

      const summary = {
        id: deal.id,
        code: deal.code,
        title: 'Acme contract',
        status: 1,
        archived_at: null,
        won_date: null,
        lost_date: null,
        created_at: deal.created_at,
        updated_at: deal.updated_at,
        stage: deal.stage,
        value: null,
        responsible: deal.responsible,
      };
      expect(won.lead.deals).to.deep.equal([summary]);
      const detail = await leadDetail(lead.id);
      expect(detail.deals).to.deep.equal([summary]);
      expect(detail.associations_count.deals).to.equal(1);
      expect((await s.one(lead.id, 'lead.updated')).deals).to.deep.equal([summary]);
    });

    it('takes the value sent; an inactive responsible of the lead hands the deal to the master user', async () => {
      const user = (await act('POST', 'users', { name: 'Leaving', email: `leaving-${Date.now()}@example.test` })).body;
      const lead = await createLead({ responsible_id: user.id });
      expect((await act('PATCH', `users/${user.id}`, { active: false })).status).to.equal(200);
      await action('POST', `leads/${lead.code}/win`, { user_id: t.user.id, deal: { title: 'Bigger', value: 2500.5 } });
      const won = await s.one(lead.id, 'lead.won');
      expect(won.deal).to.include({ value: 2500.5, visibility: 0, measurement_consent: 'GRANTED' });
      expect(won.deal.responsible.id).to.equal(t.master.id);
      expect(won.deal.created_by.id).to.equal(t.user.id);
      expect((await leadDetail(lead.id)).deals.map((d: any) => d.value)).to.deep.equal([2500.5]);
    });

    it('without deal, lead.won carries deal null and no deal is created', async () => {
      const lead = await createLead();
      await action('POST', `leads/${lead.id}/win`, { user_id: t.user.id });
      const won = await s.one(lead.id, 'lead.won');
      expect(won.deal).to.equal(null);
      expect(won.lead.deals).to.deep.equal([]);
      expect((await leadDetail(lead.id)).associations_count.deals).to.equal(0);
    });

    it('an invalid deal is a 400 naming the field: the lead stays open and no deal or event is written', async () => {
      const lead = await createLead();
      const before = await leadDetail(lead.id);
      expect400(await act('POST', `leads/${lead.id}/win`, { user_id: t.user.id, deal: {} }), 'deal.title');
      expect400(await act('POST', `leads/${lead.id}/win`, { user_id: t.user.id, deal: { title: ' ' } }), 'deal.title');
      expect400(await act('POST', `leads/${lead.id}/win`, { user_id: t.user.id, deal: { title: 'x'.repeat(151) } }), 'deal.title');
      expect400(await act('POST', `leads/${lead.id}/win`, { user_id: t.user.id, deal: { title: 'D', value: -5 } }), 'deal.value');
      expect400(await act('POST', `leads/${lead.id}/win`, { user_id: t.user.id, deal: { title: 'D', stage_id: NO_SUCH } }), 'stage_id');
      expect400(await act('POST', `leads/${lead.id}/win`, { user_id: NO_SUCH, deal: { title: 'D' } }), 'user_id');
      const theirs = await act('POST', `leads/${lead.id}/win`, { user_id: other.master.id, deal: { title: 'D' } }, {
        company: other.company,
      } as Tenant);
      expect(theirs.status, theirs.text).to.equal(404);
      const after = await leadDetail(lead.id);
      expect(after).to.deep.include({ status: 1, updated_at: before.updated_at, deals: [] });
      await s.expectExactly('lead', lead.id, { 'lead.created': 1 });
    });
  });
});
