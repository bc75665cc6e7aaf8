import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { startReceiver } from '../support/receiver.js';
import { deliveredPayload, deliveriesOf, expectSizeSetTo12, LEAD_SNAPSHOT_FIELDS, salesEventKeys } from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

/** Every lead.* event of the catalog, seen by a real receiver through the outbox, JetStream and webhooks. */
describe('lead events: every trigger of the catalog, delivered with its payload', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let t: Tenant;
  const ref: Record<string, any> = {};

  const received = (leadId: string, key: string) => deliveriesOf(receiver, 'lead', leadId, key);
  const one = (leadId: string, key: string, count = 1) => deliveredPayload(receiver, 'lead', leadId, key, count);
  const create = async (body: Record<string, unknown>) => {
    const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Evented', ...body } });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number };
  };
  const put = async (id: string, body: Record<string, unknown>) => {
    const res = await call('PUT', `/integrations/external/leads/${id}`, { token: t.key.key, body: { title: 'Evented', ...body } });
    expect(res.status, res.text).to.equal(200);
  };
  const action = async (method: string, path: string, body?: unknown) => {
    const res = await admin(method, `/companies/${t.company.id}/leads/${path}`, body);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const detail = async (id: string) => (await call('GET', `/integrations/external/leads/${id}`, { token: t.key.key })).body;
  const expectSnapshot = (lead: any, id: string) => {
    expect(lead).to.include.all.keys(...LEAD_SNAPSHOT_FIELDS);
    expect(lead.id).to.equal(id);
  };

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    receiver = await startReceiver();
    t = await seedTenant(call, stack.adminToken);
    const sub = await admin('POST', `/companies/${t.company.id}/webhooks`, {
      url: receiver.url(`/${t.company.id}`),
      events: salesEventKeys('lead'),
    });
    expect(sub.status, sub.text).to.equal(201);
    const make = async (path: string, body: unknown) => (await admin('POST', `/companies/${t.company.id}/${path}`, body)).body;
    ref.hot = await make('tags', { name: 'Hot', color: { background: '#f00', foreground: '#fff' } });
    ref.vip = await make('tags', { name: 'VIP' });
    ref.size = await make('custom-fields', { entity: 'lead', name: 'Size', type: 'number' });
    ref.segment = await make('custom-fields', { entity: 'lead', name: 'Segment', type: 'select', options: ['SMB', 'Enterprise'] });
    ref.price = await make('loss-reasons', { name: 'Price' });
    ref.timing = await make('loss-reasons', { name: 'Timing' });
    ref.ana = await make('persons', { name: 'Ana', contacts: [{ type: 1, value: 'ana@example.test' }] });
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('lead.created: the snapshot (equal to the detail), the creation`s custom field changes and quality; body tags fire no tag event', async () => {
    const lead = await create({
      tags: [ref.hot.id],
      persons_id: [ref.ana.id],
      quality_rating: 4,
      quality_reason: 'Good fit',
      custom_fields: [{ id: ref.size.id, value: '12' }],
      organization: { name: 'Org' },
    });
    const payload = await one(lead.id, 'lead.created');
    expectSnapshot(payload.lead, lead.id);
    expect(payload.lead.code).to.equal(lead.code);
    expect(payload).to.include({ previous_quality: null, previous_quality_reason: null, new_quality: 4, new_quality_reason: 'Good fit' });
    expectSizeSetTo12(payload, ref);
    const d = await detail(lead.id);
    for (const field of LEAD_SNAPSHOT_FIELDS) expect(payload.lead[field], field).to.deep.equal(d[field]);
    expect(payload.lead.tags).to.deep.equal([{ id: ref.hot.id, name: 'Hot', color: { background: '#f00', foreground: '#fff' } }]);
    await one(lead.id, 'lead.created');
    expect(received(lead.id, 'lead.tag_added')).to.deep.equal([]);
  });

  it('PUT with a stage move: lead.stage_changed and lead.updated (the full snapshot)', async () => {
    const lead = await create({});
    await put(lead.id, { stage_id: t.pipeline.stages[1].id, title: 'Moved by PUT' });
    const changed = await one(lead.id, 'lead.stage_changed');
    expect(changed.previous_stage).to.deep.equal({
      id: t.pipeline.stages[0].id,
      name: 'New',
      pipeline: { id: t.pipeline.id, name: 'Sales' },
    });
    expect(changed.current_stage).to.deep.equal({
      id: t.pipeline.stages[1].id,
      name: 'Qualified',
      pipeline: { id: t.pipeline.id, name: 'Sales' },
    });
    expectSnapshot(changed.lead, lead.id);
    const updated = await one(lead.id, 'lead.updated');
    expectSnapshot(updated, lead.id);
    expect(updated).to.include({ title: 'Moved by PUT' });
    expect(updated.stage.id).to.equal(t.pipeline.stages[1].id);
    const d = await detail(lead.id);
    for (const field of LEAD_SNAPSHOT_FIELDS) expect(updated[field], field).to.deep.equal(d[field]);
  });

  it('PUT with custom fields and quality: custom_field_updated, custom_field_removed, quality_updated', async () => {
    const lead = await create({ custom_fields: [{ id: ref.size.id, value: '1' }], quality_rating: 2 });
    await put(lead.id, {
      custom_fields: [
        { id: ref.size.id, value: null },
        { id: ref.segment.id, option_id: ref.segment.options[1].id },
      ],
      quality_rating: 5,
      quality_reason: 'Budget',
    });
    const updated = await one(lead.id, 'lead.custom_field_updated');
    expectSnapshot(updated.lead, lead.id);
    expect(updated.custom_fields_changed).to.have.length(1);
    expect(updated.custom_fields_changed[0]).to.deep.include({
      field_id: ref.segment.id,
      field_name: 'Segment',
      field_type: 4,
      previous_answers: [],
    });
    expect(updated.custom_fields_changed[0].answers[0]).to.include({ option_id: ref.segment.options[1].id, option_value: 'Enterprise' });
    const removed = await one(lead.id, 'lead.custom_field_removed');
    expect(removed.removed_fields).to.have.length(1);
    expect(removed.removed_fields[0]).to.deep.include({ field_id: ref.size.id, field_name: 'Size', field_type: 2 });
    expect(removed.removed_fields[0].previous_answers[0]).to.include({ value: '1' });
    const quality = await one(lead.id, 'lead.quality_updated');
    expect(quality).to.include({ previous_quality: 2, previous_quality_reason: null, new_quality: 5, new_quality_reason: 'Budget' });
    expectSnapshot(quality.lead, lead.id);
    expect((await one(lead.id, 'lead.updated')).quality_rating).to.equal(5);
  });

  describe('the admin API`s dedicated actions', () => {
    it('win: lead.won with won_date, won_by and deal null', async () => {
      const lead = await create({});
      const snapshot = await action('POST', `${lead.id}/win`, { user_id: t.master.id });
      expect(snapshot.status).to.equal(2);
      const won = await one(lead.id, 'lead.won');
      expect(won.won_by).to.deep.equal({ id: t.master.id, name: 'Master', avatar: null });
      expect(won.deal).to.equal(null);
      expect(won.won_date).to.equal(won.lead.won_date);
      expect(won.lead.status).to.equal(2);
      expect((await one(lead.id, 'lead.updated')).status).to.equal(2);
    });
    it('lose: lead.lost with lost_date, lost_by, the loss reasons in order and the description', async () => {
      const lead = await create({});
      await action('POST', `${lead.code}/lose`, {
        user_id: t.user.id,
        loss_reason_ids: [ref.timing.id, ref.price.id],
        description: 'Too late',
      });
      const lost = await one(lead.id, 'lead.lost');
      expect(lost.lost_by).to.deep.equal({ id: t.user.id, name: 'Integrator', avatar: null });
      expect(lost.loss_reason).to.deep.equal({ id: ref.timing.id, name: 'Timing' });
      expect(lost.loss_reasons).to.deep.equal([
        { id: ref.timing.id, name: 'Timing' },
        { id: ref.price.id, name: 'Price' },
      ]);
      expect(lost.loss_reason_description).to.equal('Too late');
      expect(lost.lost_date).to.equal(lost.lead.lost_date);
      expect(lost.lead).to.include({ status: 3, lost_reason_description: 'Too late' });
      expect(lost.lead.crm_loss_reasons).to.deep.equal(lost.loss_reasons);
      const d = await detail(lead.id);
      expect(d.crm_loss_reason).to.deep.equal({ id: ref.timing.id, name: 'Timing' });
    });
    it('move: lead.stage_changed and lead.updated', async () => {
      const lead = await create({});
      await action('POST', `${lead.id}/move`, { user_id: t.user.id, stage_id: t.pipeline.stages[2].id });
      const changed = await one(lead.id, 'lead.stage_changed');
      expect(changed.current_stage.id).to.equal(t.pipeline.stages[2].id);
      expect(changed.previous_stage.id).to.equal(t.pipeline.stages[0].id);
      expect((await one(lead.id, 'lead.updated')).stage.id).to.equal(t.pipeline.stages[2].id);
    });
    it('tags: lead.tag_added with the tags added, lead.tag_removed with the tag removed', async () => {
      const lead = await create({ tags: [ref.hot.id] });
      await action('POST', `${lead.id}/tags`, { user_id: t.user.id, tag_ids: [ref.hot.id, ref.vip.id] });
      const added = await one(lead.id, 'lead.tag_added');
      expect(added.added_tags).to.deep.equal([{ id: ref.vip.id, name: 'VIP', color: { background: null, foreground: null } }]);
      expect(added.lead.tags.map((x: any) => x.name)).to.deep.equal(['Hot', 'VIP']);
      await action('DELETE', `${lead.id}/tags/${ref.hot.id}?user_id=${t.user.id}`);
      const removed = await one(lead.id, 'lead.tag_removed');
      expect(removed.removed_tags).to.deep.equal([{ id: ref.hot.id, name: 'Hot', color: { background: '#f00', foreground: '#fff' } }]);
      expect(removed.lead.tags.map((x: any) => x.name)).to.deep.equal(['VIP']);
    });
    it('custom fields: lead.custom_field_updated with the previous answers, lead.custom_field_removed', async () => {
      const lead = await create({ custom_fields: [{ id: ref.size.id, value: '3' }] });
      await action('PUT', `${lead.id}/custom-fields/${ref.size.id}`, { user_id: t.user.id, value: '30' });
      const updated = await one(lead.id, 'lead.custom_field_updated');
      expect(updated.custom_fields_changed[0].previous_answers.map((a: any) => a.value)).to.deep.equal(['3']);
      expect(updated.custom_fields_changed[0].answers.map((a: any) => a.value)).to.deep.equal(['30']);
      await action('DELETE', `${lead.id}/custom-fields/${ref.size.id}?user_id=${t.user.id}`);
      const removed = await one(lead.id, 'lead.custom_field_removed');
      expect(removed.removed_fields[0].previous_answers.map((a: any) => a.value)).to.deep.equal(['30']);
      expect(removed.lead.custom_fields).to.deep.equal([]);
    });
    it('quality: lead.quality_updated with the previous and new qualification', async () => {
      const lead = await create({ quality_rating: 1, quality_reason: 'Cold' });
      await action('PUT', `${lead.id}/quality`, { user_id: t.user.id, quality_rating: 3, quality_reason: 'Warming' });
      const q = await one(lead.id, 'lead.quality_updated');
      expect(q).to.include({ previous_quality: 1, previous_quality_reason: 'Cold', new_quality: 3, new_quality_reason: 'Warming' });
      expect(q.lead).to.include({ quality_rating: 3, quality_reason: 'Warming' });
    });
    it('refuses an unknown acting user, stage, tag or loss reason with a 400 and another company`s lead with 404', async () => {
      const lead = await create({});
      const bad = async (method: string, path: string, body: unknown, field: string) => {
        const res = await admin(method, `/companies/${t.company.id}/leads/${path}`, body);
        expect(res.status, `${path} ${res.text}`).to.equal(400);
        expect(res.body.message).to.contain(field);
      };
      await bad('POST', `${lead.id}/win`, { user_id: '00000000-0000-7000-8000-000000000000' }, 'user_id');
      await bad('POST', `${lead.id}/move`, { user_id: t.user.id, stage_id: '00000000-0000-7000-8000-000000000000' }, 'stage_id');
      await bad('POST', `${lead.id}/tags`, { user_id: t.user.id, tag_ids: ['00000000-0000-7000-8000-000000000000'] }, 'tag_ids[0]');
      await bad(
        'POST',
        `${lead.id}/lose`,
        { user_id: t.user.id, loss_reason_ids: ['00000000-0000-7000-8000-000000000000'] },
        'loss_reason_ids[0]',
      );
      await bad('PUT', `${lead.id}/quality`, { user_id: t.user.id, quality_rating: 9 }, 'quality_rating');
      const other = await seedTenant(call, stack.adminToken);
      const res = await admin('POST', `/companies/${other.company.id}/leads/${lead.id}/win`, { user_id: other.master.id });
      expect(res.status).to.equal(404);
      expect((await detail(lead.id)).status).to.equal(1);
    });
  });
});
