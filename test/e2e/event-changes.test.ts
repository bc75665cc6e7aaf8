import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import type { Tenant } from '../support/fixtures.js';
import { type PostSaleStack, postSaleStack, withoutChanges } from '../support/post-sale.js';
import { LEAD_SNAPSHOT_FIELDS } from '../support/sales.js';

/**
 * `changes` of the events of a change (issue 21 item 3, decision 0178), delivered through the outbox, JetStream and
 * webhooks to a real receiver: exactly the fields the change touched, `{from, to}` in the snapshot's shapes, custom
 * fields by id; the spec's fields unchanged beside it.
 */
describe('update events carry changes: {field: {from, to}} for each field the change touched', function () {
  this.timeout(120_000);
  let s: PostSaleStack;
  let t: Tenant;
  const ref: Record<string, any> = {};

  /** The payloads of `key` whose record (the payload itself for `<kind>.updated`, else `payload[kind]`) is `id`. */
  const about = (key: string, id: string) =>
    s.receiver.received
      .filter((r) => r.body?.event_key === key)
      .map((r) => r.body.payload)
      .filter((p) => (key.endsWith('.updated') && !key.startsWith('contract') ? p.id : p[key.split('.')[0]!]?.id) === id);
  const nth = (key: string, id: string, count = 1) => eventually(() => about(key, id)[count - 1], 15_000);
  const external = async (method: string, path: string, body: Record<string, unknown>, status: number) => {
    const res = await s.call(method, `/integrations/external/${path}`, { token: t.key.key, body });
    expect(res.status, res.text).to.equal(status);
    return res.body;
  };

  before(async () => {
    s = await postSaleStack([
      'lead.created',
      'lead.updated',
      'lead.stage_changed',
      'lead.custom_field_updated',
      'deal.updated',
      'delivery.updated',
      'delivery.stage_changed',
      'contract.updated',
      'contract.renewed',
    ]);
    t = s.t;
    ref.size = await s.ok('POST', 'custom-fields', { entity: 'lead', name: 'Size', type: 'number' }, 201);
    ref.note = await s.ok('POST', 'custom-fields', { entity: 'lead', name: 'Note', type: 'text' }, 201);
    ref.pipeline = await s.ok(
      'POST',
      'delivery-pipelines',
      { name: 'Implementation', stages: [{ name: 'Kick-off' }, { name: 'Build' }] },
      201,
    );
  });
  after(() => s?.close());

  it('a PUT /leads/{id} that changes the title and a custom field fires lead.updated whose changes holds exactly those two', async () => {
    const lead = await external(
      'POST',
      'leads',
      {
        title: 'Before',
        custom_fields: [
          { id: ref.size.id, value: '1' },
          { id: ref.note.id, value: 'kept' },
        ],
      },
      201,
    );
    const created = await nth('lead.created', lead.id);
    expect(created).not.to.have.property('changes');
    // The note is sent again with its current value: not a change.
    await external(
      'PUT',
      `leads/${lead.id}`,
      {
        title: 'After',
        custom_fields: [
          { id: ref.size.id, value: '2' },
          { id: ref.note.id, value: 'kept' },
        ],
      },
      200,
    );
    const updated = await nth('lead.updated', lead.id);
    expect(Object.keys(updated.changes)).to.have.members(['title', 'custom_fields']);
    expect(updated.changes.title).to.deep.equal({ from: 'Before', to: 'After' });
    expect(Object.keys(updated.changes.custom_fields)).to.deep.equal([ref.size.id]);
    const entry = (snapshot: any) => snapshot.custom_fields.find((f: any) => f.field_id === ref.size.id);
    expect(updated.changes.custom_fields[ref.size.id]).to.deep.equal({ from: entry(created.lead), to: entry(updated) });
    expect(entry(updated).answers[0]).to.include({ value: '2' });
    // The spec's fields stay as they are: the snapshot is the detail's, beside changes.
    const detail = (await s.call('GET', `/integrations/external/leads/${lead.id}`, { token: t.key.key })).body;
    for (const field of LEAD_SNAPSHOT_FIELDS) expect(updated[field], field).to.deep.equal(detail[field]);
    // The other events of the same change carry the same changes.
    const answered = await nth('lead.custom_field_updated', lead.id);
    expect(answered.changes).to.deep.equal(updated.changes);
  });

  it('a field sent with its current value is no change: a PUT that only moves the stage reports the stage alone', async () => {
    const lead = await external('POST', 'leads', { title: 'Same title' }, 201);
    await external('PUT', `leads/${lead.id}`, { title: 'Same title', stage_id: t.pipeline.stages[1].id }, 200);
    const updated = await nth('lead.updated', lead.id);
    expect(Object.keys(updated.changes)).to.deep.equal(['stage']);
    expect(updated.changes.stage.from.id).to.equal(t.pipeline.stages[0].id);
    expect(updated.changes.stage.to).to.deep.equal(updated.stage);
    expect((await nth('lead.stage_changed', lead.id)).changes).to.deep.equal(updated.changes);
  });

  it('deal.updated: the changed value, with the valuation it moves, and nothing else', async () => {
    const deal = await external('POST', 'deals', { title: 'Deal', value: 100 }, 201);
    await external('PUT', `deals/${deal.id}`, { title: 'Deal', value: 250 }, 200);
    const updated = await nth('deal.updated', deal.id);
    expect(updated.changes.value).to.deep.equal({ from: 100, to: 250 });
    expect(updated.changes).not.to.have.any.keys('title', 'updated_at', 'proposals', 'channel_chats', 'whatsapp_chats');
    for (const [field, change] of Object.entries<any>(updated.changes)) expect(change.to, field).to.deep.equal(updated[field]);
  });

  it('delivery.updated and delivery.stage_changed: what the PATCH and the move changed, updated_at aside', async () => {
    const d = await s.ok('POST', 'deliveries', { user_id: t.user.id, title: 'Onboarding' }, 201);
    const patched = await s.ok('PATCH', `deliveries/${d.id}`, { user_id: t.user.id, title: 'Renamed', description: null });
    const updated = await nth('delivery.updated', d.id);
    expect(withoutChanges(updated)).to.deep.equal(patched);
    expect(updated.changes).to.deep.equal({ title: { from: 'Onboarding', to: 'Renamed' } });
    const moved = await s.ok('POST', `deliveries/${d.id}/move`, { user_id: t.user.id, stage_id: ref.pipeline.stages[1].id });
    const changed = await nth('delivery.stage_changed', d.id);
    expect(Object.keys(changed.changes)).to.have.members(['stage_id', 'stage']);
    expect(changed.changes.stage).to.deep.equal({ from: patched.stage, to: moved.stage });
    expect((await nth('delivery.updated', d.id, 2)).changes).to.deep.equal(changed.changes);
  });

  it('contract.updated keeps changed_fields and adds changes; contract.renewed says what the renewal moved', async () => {
    const c = await s.ok(
      'POST',
      'contracts',
      { user_id: t.user.id, title: 'Plan', start_date: '2027-01-01', end_date: '2027-12-31', value: 1200 },
      201,
    );
    await s.ok('PATCH', `contracts/${c.id}`, { user_id: t.user.id, title: 'Plan B', value: 1200 });
    const updated = await nth('contract.updated', c.id);
    expect(updated.changed_fields).to.deep.equal(['title']);
    expect(updated.changes).to.deep.equal({ title: { from: 'Plan', to: 'Plan B' } });
    await s.ok('POST', `contracts/${c.id}/renew`, { user_id: t.user.id, end_date: '2028-12-31' });
    const renewed = await nth('contract.renewed', c.id);
    expect(renewed.changes.end_date).to.deep.equal({ from: '2027-12-31', to: '2028-12-31' });
    expect(renewed.changes.renewal_count).to.deep.equal({ from: 0, to: 1 });
    expect(renewed.changes.renewals.to).to.have.length(1);
  });
});
