import { expect } from 'chai';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import {
  DELIVERY_SNAPSHOT_FIELDS,
  eventKeysOf,
  expectError,
  type PostSaleStack,
  postSaleStack,
  withoutChanges,
} from '../support/post-sale.js';

const NO_SUCH = '00000000-0000-7000-8000-000000000000';

/** Deliveries through the gateway's admin API, every delivery.* event seen by a real receiver with its payload. */
describe('deliveries: pipelines, the dedicated actions and their events', () => {
  let s: PostSaleStack;
  let t: Tenant;
  let other: Tenant;
  let pipeline: any;
  let second: any;
  let deal: any;
  let org: any;
  const userSummaryOf = (u: any) => ({ id: u.id, name: u.name, avatar: null });
  const stageOf = (p: any, i: number) => ({ id: p.stages[i].id, name: p.stages[i].name, pipeline: { id: p.id, name: p.name } });
  const create = (body: Record<string, unknown> = {}) =>
    s.ok('POST', 'deliveries', { user_id: t.user.id, title: 'Onboarding', ...body }, 201);

  before(async () => {
    s = await postSaleStack(eventKeysOf('delivery'));
    t = s.t;
    other = await seedTenant(s.call, s.stack.adminToken);
    pipeline = await s.ok('POST', 'delivery-pipelines', { name: 'Implementation', stages: [{ name: 'Kick-off' }, { name: 'Build' }] }, 201);
    second = await s.ok('POST', 'delivery-pipelines', { name: 'Support', stages: [{ name: 'Triage' }] }, 201);
    const d = await s.call('POST', '/integrations/external/deals', { token: t.key.key, body: { title: 'Big sale' } });
    deal = d.body;
    org = await s.ok('POST', 'organizations', { name: 'Acme' }, 201);
  });
  after(() => s?.close());

  it('delivery pipelines: the first is the default, stages in order; a pipeline without stages is a 400; an unknown company a 404', async () => {
    expect(pipeline).to.include({ name: 'Implementation', is_default: true });
    expect(pipeline.stages.map((x: any) => [x.name, x.position])).to.deep.equal([
      ['Kick-off', 1],
      ['Build', 2],
    ]);
    expect(second.is_default).to.equal(false);
    expectError(await s.act('POST', 'delivery-pipelines', { name: 'Empty', stages: [] }), 400, 'stages');
    expectError(
      await s.act('POST', 'delivery-pipelines', { name: 'X', stages: [{ name: 'A' }] }, { company: { id: NO_SUCH } }),
      404,
      'Company',
    );
    const listed = await s.ok('GET', 'delivery-pipelines');
    expect(listed.map((p: any) => p.id)).to.deep.equal([pipeline.id, second.id]);
  });

  it('create: 201 with the DeliverySnapshot; delivery.created carries {delivery, created_by} equal to GET', async () => {
    const answer = await create({
      description: 'Set up the account',
      responsible_id: t.master.id,
      deal_id: deal.id,
      organization_id: org.id,
      planned_start_date: '2026-12-01',
      planned_end_date: '2026-12-20T18:00:00-03:00',
    });
    expect(answer).to.include.all.keys(...DELIVERY_SNAPSHOT_FIELDS, 'stage', 'responsible', 'created_by', 'deal', 'organization', 'person');
    expect(answer).to.include({
      title: 'Onboarding',
      description: 'Set up the account',
      status: 1,
      company_id: t.company.id,
      pipeline_id: pipeline.id,
      planned_start_date: '2026-12-01T00:00:00.000Z',
      planned_end_date: '2026-12-20T21:00:00.000Z',
      started_at: null,
      delivered_at: null,
      cancelled_at: null,
      cancellation_reason: null,
    });
    expect(answer.code).to.be.a('number');
    expect(answer.stage).to.deep.equal(stageOf(pipeline, 0));
    expect(answer.responsible).to.deep.equal(userSummaryOf(t.master));
    expect(answer.created_by).to.deep.equal(userSummaryOf(t.user));
    expect(answer.deal).to.deep.equal({ id: deal.id, code: deal.code, title: 'Big sale', status: 1 });
    expect(answer.organization).to.deep.equal({ id: org.id, name: 'Acme', logo: null });
    const created = await s.one('delivery.created', answer.id);
    expect(created).to.have.all.keys('delivery', 'created_by');
    expect(created.delivery).to.deep.equal(answer);
    expect(created.created_by).to.deep.equal(userSummaryOf(t.user));
    expect(await s.ok('GET', `deliveries/${answer.id}`)).to.deep.equal(answer);
    expect(await s.ok('GET', `deliveries/${answer.code}`)).to.deep.equal(answer);
  });

  it('create: codes follow each other per company; stage_id picks the pipeline', async () => {
    const a = await create();
    const b = await create({ stage_id: second.stages[0].id });
    expect(b.code).to.equal(a.code + 1);
    expect(b).to.include({ pipeline_id: second.id });
    expect(b.stage).to.deep.equal(stageOf(second, 0));
  });

  it('create: bad input is a 400 naming the field and writes nothing', async () => {
    const before = (await s.ok('GET', 'deliveries')).total;
    expectError(await s.act('POST', 'deliveries', { user_id: t.user.id }), 400, 'title');
    expectError(
      await s.act('POST', 'deliveries', { user_id: t.user.id, title: 'x'.repeat(151) }),
      400,
      'title: must be 1 to 150 characters',
    );
    expectError(await s.act('POST', 'deliveries', { user_id: other.user.id, title: 'A' }), 400, 'user_id');
    expectError(await s.act('POST', 'deliveries', { user_id: t.user.id, title: 'A', deal_id: NO_SUCH }), 400, 'deal_id');
    expectError(await s.act('POST', 'deliveries', { user_id: t.user.id, title: 'A', stage_id: t.pipeline.stages[0].id }), 400, 'stage_id');
    expectError(
      await s.act('POST', 'deliveries', { user_id: t.user.id, title: 'A', responsible_id: other.user.id }),
      400,
      'responsible_id',
    );
    expectError(
      await s.act('POST', 'deliveries', {
        user_id: t.user.id,
        title: 'A',
        planned_start_date: '2026-12-02',
        planned_end_date: '2026-12-01',
      }),
      400,
      'planned_end_date',
    );
    expectError(
      await s.act('POST', 'deliveries', { user_id: t.user.id, title: 'A', planned_start_date: 'tomorrow' }),
      400,
      'planned_start_date',
    );
    expectError(await s.act('POST', 'deliveries', { user_id: t.user.id, title: 'A', status: 3 }), 400, 'status');
    expectError(
      await s.act('POST', 'deliveries', { user_id: other.user.id, title: 'A' }, other),
      400,
      'pipeline_id: the company has no delivery pipeline',
    );
    expect((await s.ok('GET', 'deliveries')).total).to.equal(before);
  });

  it('auth and tenancy: no admin token is a 401, a key is a 401; another company`s delivery is a 404 on every action', async () => {
    const d = await create();
    expect((await s.call('GET', `/admin/v1/companies/${t.company.id}/deliveries/${d.id}`)).status).to.equal(401);
    expect((await s.call('POST', `/admin/v1/companies/${t.company.id}/deliveries`, { token: t.key.key, body: {} })).status).to.equal(401);
    expect((await s.call('POST', `/integrations/external/deliveries`, { token: t.key.key, body: {} })).status).to.equal(404);
    const theirs = { company: other.company };
    expectError(await s.act('GET', `deliveries/${d.id}`, undefined, theirs), 404, 'Delivery');
    expectError(await s.act('PATCH', `deliveries/${d.id}`, { user_id: other.user.id, title: 'Mine' }, theirs), 404, 'Delivery');
    expectError(
      await s.act('POST', `deliveries/${d.id}/move`, { user_id: other.user.id, stage_id: pipeline.stages[1].id }, theirs),
      404,
      'Delivery',
    );
    expectError(await s.act('POST', `deliveries/${d.id}/complete`, { user_id: other.user.id }, theirs), 404, 'Delivery');
    expectError(await s.act('GET', 'deliveries/not-an-id'), 404, 'Delivery');
    expect((await s.ok('GET', `deliveries/${d.id}`)).title).to.equal('Onboarding');
  });

  it('PATCH: delivery.updated with the changed snapshot; status 2 starts it, 4 cancels it, 1 reopens it; no change fires nothing', async () => {
    const d = await create();
    const started = await s.ok('PATCH', `deliveries/${d.id}`, { user_id: t.user.id, title: 'Renamed', status: 2, person_id: null });
    expect(started).to.include({ title: 'Renamed', status: 2 });
    expect(started.started_at).to.be.a('string');
    const updated = await s.one('delivery.updated', d.id);
    expect(updated).to.include.all.keys(...DELIVERY_SNAPSHOT_FIELDS);
    expect(withoutChanges(updated)).to.deep.equal(started);
    expect(Date.parse(updated.updated_at)).to.be.greaterThan(Date.parse(d.updated_at) - 1);
    const same = await s.ok('PATCH', `deliveries/${d.id}`, { user_id: t.user.id, title: 'Renamed' });
    expect(same.updated_at).to.equal(started.updated_at);
    expectError(await s.act('PATCH', `deliveries/${d.id}`, { user_id: t.user.id, cancellation_reason: 'Why' }), 400, 'cancellation_reason');
    expectError(await s.act('PATCH', `deliveries/${d.id}`, { user_id: t.user.id, status: 3 }), 400, 'complete action');
    expectError(await s.act('PATCH', `deliveries/${d.id}`, { user_id: t.user.id, stage_id: second.stages[0].id }), 400, 'stage_id');
    const cancelled = await s.ok('PATCH', `deliveries/${d.id}`, { user_id: t.user.id, status: 4, cancellation_reason: ' Client gave up ' });
    expect(cancelled).to.include({ status: 4, cancellation_reason: 'Client gave up' });
    expect(cancelled.cancelled_at).to.be.a('string');
    expect(withoutChanges(await s.one('delivery.updated', d.id, 2))).to.deep.equal(cancelled);
    expectError(await s.act('POST', `deliveries/${d.id}/move`, { user_id: t.user.id, stage_id: pipeline.stages[1].id }), 409, 'cancelled');
    const reopened = await s.ok('PATCH', `deliveries/${d.id}`, { user_id: t.user.id, status: 1 });
    expect(reopened).to.include({ status: 1, cancelled_at: null, cancellation_reason: null, started_at: null });
    expect(withoutChanges(await s.one('delivery.updated', d.id, 3))).to.deep.equal(reopened);
  });

  it('move: delivery.stage_changed {previous_stage, current_stage, delivery, moved_by}, then delivery.updated; the same stage fires nothing', async () => {
    const d = await create();
    const moved = await s.ok('POST', `deliveries/${d.id}/move`, { user_id: t.master.id, stage_id: second.stages[0].id });
    expect(moved).to.include({ pipeline_id: second.id });
    const changed = await s.one('delivery.stage_changed', d.id);
    expect(changed).to.have.all.keys('previous_stage', 'current_stage', 'delivery', 'moved_by', 'changes');
    expect(changed.previous_stage).to.deep.equal(stageOf(pipeline, 0));
    expect(changed.current_stage).to.deep.equal(stageOf(second, 0));
    expect(changed.moved_by).to.deep.equal(userSummaryOf(t.master));
    expect(changed.delivery).to.deep.equal(moved);
    expect(withoutChanges(await s.one('delivery.updated', d.id))).to.deep.equal(moved);
    const again = await s.ok('POST', `deliveries/${d.id}/move`, { user_id: t.master.id, stage_id: second.stages[0].id });
    expect(again.updated_at).to.equal(moved.updated_at);
    expectError(await s.act('POST', `deliveries/${d.id}/move`, { user_id: t.master.id, stage_id: 'x' }), 400, 'stage_id');
  });

  it('no delivery event is issued while the company`s plan is not valid; the change itself is made', async () => {
    const expire = await s.admin('PATCH', `/companies/${t.company.id}`, { plan_valid_until: '2020-01-01T00:00:00Z' });
    expect(expire.status, expire.text).to.equal(200);
    const silent = await create({ title: 'Outside the plan' });
    await s.ok('POST', `deliveries/${silent.id}/complete`, { user_id: t.user.id });
    await s.admin('PATCH', `/companies/${t.company.id}`, { plan_valid_until: null });
    const later = await create();
    await s.one('delivery.created', later.id);
    expect(s.counts(silent.id, 'delivery')).to.deep.equal({
      'delivery.created': 0,
      'delivery.updated': 0,
      'delivery.stage_changed': 0,
      'delivery.completed': 0,
    });
    expect((await s.ok('GET', `deliveries/${silent.id}`)).status).to.equal(3);
  });

  it('complete: delivery.completed {delivery, completed_by, delivered_at}, then delivery.updated; a delivered delivery is final (409)', async () => {
    const d = await create();
    const done = await s.ok('POST', `deliveries/${d.code}/complete`, { user_id: t.master.id, delivered_at: '2026-12-24T10:00:00Z' });
    expect(done).to.include({ status: 3, delivered_at: '2026-12-24T10:00:00.000Z' });
    expect(done.completed_by).to.deep.equal(userSummaryOf(t.master));
    const completed = await s.one('delivery.completed', d.id);
    expect(completed).to.have.all.keys('delivery', 'completed_by', 'delivered_at', 'changes');
    expect(completed.delivery).to.deep.equal(done);
    expect(completed.completed_by).to.deep.equal(userSummaryOf(t.master));
    expect(completed.delivered_at).to.equal('2026-12-24T10:00:00.000Z');
    expect(withoutChanges(await s.one('delivery.updated', d.id))).to.deep.equal(done);
    expectError(await s.act('POST', `deliveries/${d.id}/complete`, { user_id: t.master.id }), 409, 'delivered');
    expectError(
      await s.act('POST', `deliveries/${d.id}/move`, { user_id: t.master.id, stage_id: pipeline.stages[1].id }),
      409,
      'delivered',
    );
    expectError(await s.act('PATCH', `deliveries/${d.id}`, { user_id: t.master.id, status: 2 }), 409, 'delivered');
    expectError(await s.act('POST', `deliveries/${d.id}/complete`, { user_id: 'x' }), 400, 'user_id');
    // A later delivery's event has had its turn after these: exactly the events above arrived.
    const later = await create();
    await s.one('delivery.created', later.id);
    expect(s.counts(d.id, 'delivery')).to.deep.equal({
      'delivery.created': 1,
      'delivery.updated': 1,
      'delivery.stage_changed': 0,
      'delivery.completed': 1,
    });
  });
});
