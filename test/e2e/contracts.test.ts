import { expect } from 'chai';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { eventKeysOf, expectError, type PostSaleStack, postSaleStack } from '../support/post-sale.js';

const NO_SUCH = '00000000-0000-7000-8000-000000000000';

const CONTRACT_FIELDS = [
  'id',
  'code',
  'title',
  'description',
  'status',
  'value',
  'start_date',
  'end_date',
  'company_id',
  'deal',
  'delivery',
  'organization',
  'person',
  'responsible',
  'created_by',
  'renewal_count',
  'last_renewed_at',
  'renewals',
  'canceled_at',
  'canceled_by',
  'cancellation_reason',
  'completed_at',
  'completed_by',
  'created_at',
  'updated_at',
];

/** Contracts through the gateway's admin API: the state machine, and every contract.* event at a real receiver. */
describe('contracts: the dedicated actions, their state machine and their events', () => {
  let s: PostSaleStack;
  let t: Tenant;
  let other: Tenant;
  let deal: any;
  let delivery: any;
  let person: any;
  const userSummaryOf = (u: any) => ({ id: u.id, name: u.name, avatar: null });
  const create = (body: Record<string, unknown> = {}) =>
    s.ok(
      'POST',
      'contracts',
      { user_id: t.user.id, title: 'Yearly plan', start_date: '2027-01-01', end_date: '2027-12-31', value: 1200, ...body },
      201,
    );

  before(async () => {
    s = await postSaleStack(eventKeysOf('contract'));
    t = s.t;
    other = await seedTenant(s.call, s.stack.adminToken);
    deal = (await s.call('POST', '/integrations/external/deals', { token: t.key.key, body: { title: 'Plan sale' } })).body;
    await s.ok('POST', 'delivery-pipelines', { name: 'Implementation', stages: [{ name: 'Kick-off' }] }, 201);
    delivery = await s.ok('POST', 'deliveries', { user_id: t.user.id, title: 'Setup' }, 201);
    person = await s.ok('POST', 'persons', { name: 'Ana Client', contacts: [] }, 201);
  });
  after(() => s?.close());

  it('create: 201 with the ContractSnapshot; contract.created carries {contract, created_by} equal to GET', async () => {
    const c = await create({
      description: 'Annual',
      deal_id: deal.id,
      delivery_id: delivery.id,
      person_id: person.id,
      responsible_id: t.master.id,
    });
    expect(c).to.have.all.keys(...CONTRACT_FIELDS);
    expect(c).to.include({
      title: 'Yearly plan',
      description: 'Annual',
      status: 1,
      value: 1200,
      start_date: '2027-01-01',
      end_date: '2027-12-31',
      company_id: t.company.id,
      renewal_count: 0,
      last_renewed_at: null,
      canceled_at: null,
      completed_at: null,
    });
    expect(c.deal).to.deep.equal({ id: deal.id, code: deal.code, title: 'Plan sale', status: 1 });
    expect(c.delivery).to.deep.equal({ id: delivery.id, code: delivery.code, title: 'Setup', status: 1 });
    expect(c.person).to.deep.equal({ id: person.id, name: 'Ana Client' });
    expect(c.organization).to.equal(null);
    expect(c.responsible).to.deep.equal(userSummaryOf(t.master));
    expect(c.created_by).to.deep.equal(userSummaryOf(t.user));
    expect(c.renewals).to.deep.equal([]);
    const created = await s.one('contract.created', c.id);
    expect(created).to.have.all.keys('contract', 'created_by');
    expect(created.contract).to.deep.equal(c);
    expect(created.created_by).to.deep.equal(userSummaryOf(t.user));
    expect(await s.ok('GET', `contracts/${c.code}`)).to.deep.equal(c);
  });

  it('create: bad input is a 400 naming the field, and no contract is written (the next code follows the last one)', async () => {
    const first = await create({ end_date: null });
    expect(first.end_date).to.equal(null);
    const bad = async (body: Record<string, unknown>, field: string) =>
      expectError(await s.act('POST', 'contracts', { user_id: t.user.id, title: 'X', start_date: '2027-01-01', ...body }), 400, field);
    await bad({ start_date: undefined }, 'start_date');
    await bad({ start_date: '2027-02-30' }, 'start_date');
    await bad({ start_date: '2027-01-01T10:00:00Z' }, 'start_date');
    await bad({ end_date: '2026-12-31' }, 'end_date: must not be before start_date');
    await bad({ title: '' }, 'title');
    await bad({ value: -1 }, 'value');
    await bad({ delivery_id: NO_SUCH }, 'delivery_id');
    await bad({ deal_id: deal.id, user_id: other.user.id }, 'user_id');
    await bad({ status: 2 }, 'status');
    const next = await create();
    expect(next.code).to.equal(first.code + 1);
  });

  it('auth and tenancy: no admin token is a 401, a key is a 401; another company`s contract is a 404 on every action', async () => {
    const c = await create();
    expect(
      (await s.call('POST', `/admin/v1/companies/${t.company.id}/contracts/${c.id}/cancel`, { body: { user_id: t.user.id } })).status,
    ).to.equal(401);
    expect((await s.call('GET', `/admin/v1/companies/${t.company.id}/contracts/${c.id}`, { token: t.key.key })).status).to.equal(401);
    const theirs = { company: other.company };
    const as = { user_id: other.user.id };
    expectError(await s.act('GET', `contracts/${c.id}`, undefined, theirs), 404, 'Contract');
    expectError(await s.act('PATCH', `contracts/${c.id}`, { ...as, title: 'Mine' }, theirs), 404, 'Contract');
    expectError(await s.act('POST', `contracts/${c.id}/cancel`, as, theirs), 404, 'Contract');
    expectError(await s.act('POST', `contracts/${c.id}/renew`, { ...as, end_date: '2030-01-01' }, theirs), 404, 'Contract');
    expectError(await s.act('POST', `contracts/${c.id}/complete`, as, theirs), 404, 'Contract');
    expect((await s.ok('GET', `contracts/${c.id}`)).status).to.equal(1);
  });

  it('PATCH: contract.updated {contract, updated_by, changed_fields}; no change fires nothing', async () => {
    const c = await create();
    const patched = await s.ok('PATCH', `contracts/${c.id}`, {
      user_id: t.master.id,
      title: 'Two-year plan',
      end_date: '2028-12-31',
      value: 1200,
    });
    expect(patched).to.include({ title: 'Two-year plan', end_date: '2028-12-31', value: 1200 });
    const updated = await s.one('contract.updated', c.id);
    expect(updated).to.have.all.keys('contract', 'updated_by', 'changed_fields', 'changes');
    expect(updated.contract).to.deep.equal(patched);
    expect(updated.updated_by).to.deep.equal(userSummaryOf(t.master));
    expect(updated.changed_fields).to.have.members(['title', 'end_date']);
    const same = await s.ok('PATCH', `contracts/${c.id}`, { user_id: t.master.id, title: 'Two-year plan' });
    expect(same.updated_at).to.equal(patched.updated_at);
    expectError(await s.act('PATCH', `contracts/${c.id}`, { user_id: t.master.id, end_date: '2026-01-01' }), 400, 'end_date');
    expectError(await s.act('PATCH', `contracts/${c.id}`, { user_id: t.master.id, status: 3 }), 400, 'status');
  });

  it('cancel: contract.canceled {contract, canceled_by, canceled_at, cancellation_reason}, then contract.updated; a canceled contract is final (409)', async () => {
    const c = await create();
    const canceled = await s.ok('POST', `contracts/${c.id}/cancel`, { user_id: t.master.id, reason: ' Budget cut ' });
    expect(canceled).to.include({ status: 2, cancellation_reason: 'Budget cut' });
    const event = await s.one('contract.canceled', c.id);
    expect(event).to.have.all.keys('contract', 'canceled_by', 'canceled_at', 'cancellation_reason', 'changes');
    expect(event.contract).to.deep.equal(canceled);
    expect(event.canceled_by).to.deep.equal(userSummaryOf(t.master));
    expect(event.canceled_at).to.equal(canceled.canceled_at).and.to.be.a('string');
    expect(event.cancellation_reason).to.equal('Budget cut');
    expect(canceled.canceled_by).to.deep.equal(userSummaryOf(t.master));
    const updated = await s.one('contract.updated', c.id);
    expect(updated.changed_fields).to.deep.equal(['status']);
    expect(updated.contract).to.deep.equal(canceled);
    for (const [path, body] of [
      ['cancel', {}],
      ['renew', { end_date: '2029-01-01' }],
      ['complete', {}],
    ] as const) {
      expectError(
        await s.act('POST', `contracts/${c.id}/${path}`, { user_id: t.master.id, ...body }),
        409,
        'The contract is canceled: it cannot be',
      );
    }
    expectError(
      await s.act('PATCH', `contracts/${c.id}`, { user_id: t.master.id, title: 'Again' }),
      409,
      'The contract is canceled: it cannot be changed',
    );
  });

  it('renew: contract.renewed with the previous and new end and value; the end must move later; an open-ended contract has nothing to renew (409)', async () => {
    const c = await create();
    expectError(
      await s.act('POST', `contracts/${c.id}/renew`, { user_id: t.user.id, end_date: '2027-12-31' }),
      400,
      'end_date: must be after',
    );
    expectError(await s.act('POST', `contracts/${c.id}/renew`, { user_id: t.user.id }), 400, 'end_date');
    const renewed = await s.ok('POST', `contracts/${c.id}/renew`, { user_id: t.user.id, end_date: '2028-12-31', value: 1500 });
    expect(renewed).to.include({ status: 1, end_date: '2028-12-31', value: 1500, renewal_count: 1 });
    expect(renewed.renewals).to.have.length(1);
    expect(renewed.renewals[0]).to.deep.include({
      renewed_by: userSummaryOf(t.user),
      previous_end_date: '2027-12-31',
      new_end_date: '2028-12-31',
      previous_value: 1200,
      new_value: 1500,
    });
    const event = await s.one('contract.renewed', c.id);
    expect(event).to.have.all.keys(
      'contract',
      'renewed_by',
      'renewed_at',
      'previous_end_date',
      'new_end_date',
      'previous_value',
      'new_value',
      'renewal_count',
      'changes',
    );
    expect(event).to.deep.include({
      renewed_by: userSummaryOf(t.user),
      previous_end_date: '2027-12-31',
      new_end_date: '2028-12-31',
      previous_value: 1200,
      new_value: 1500,
      renewal_count: 1,
    });
    expect(event.renewed_at).to.equal(renewed.last_renewed_at).and.to.be.a('string');
    expect(event.contract).to.deep.equal(renewed);
    expect((await s.one('contract.updated', c.id)).changed_fields).to.have.members(['value', 'end_date']);
    const open = await create({ end_date: null });
    expectError(await s.act('POST', `contracts/${open.id}/renew`, { user_id: t.user.id, end_date: '2030-01-01' }), 409, 'open-ended');
  });

  it('complete: contract.completed {contract, completed_by, completed_at}; a completed contract can only be renewed, which reactivates it', async () => {
    const c = await create();
    const done = await s.ok('POST', `contracts/${c.id}/complete`, { user_id: t.master.id });
    expect(done).to.include({ status: 3 });
    const event = await s.one('contract.completed', c.id);
    expect(event).to.have.all.keys('contract', 'completed_by', 'completed_at', 'changes');
    expect(event.contract).to.deep.equal(done);
    expect(event.completed_by).to.deep.equal(userSummaryOf(t.master));
    expect(event.completed_at).to.equal(done.completed_at).and.to.be.a('string');
    expectError(
      await s.act('POST', `contracts/${c.id}/complete`, { user_id: t.master.id }),
      409,
      'The contract is completed: it cannot be completed',
    );
    expectError(
      await s.act('POST', `contracts/${c.id}/cancel`, { user_id: t.master.id }),
      409,
      'The contract is completed: it cannot be canceled',
    );
    expectError(await s.act('PATCH', `contracts/${c.id}`, { user_id: t.master.id, title: 'x' }), 409, 'completed');
    const again = await s.ok('POST', `contracts/${c.id}/renew`, { user_id: t.master.id, end_date: '2028-06-30' });
    expect(again).to.include({ status: 1, completed_at: null, completed_by: null, renewal_count: 1, value: 1200 });
    expect((await s.one('contract.renewed', c.id)).contract).to.deep.equal(again);
    expect((await s.one('contract.updated', c.id, 2)).changed_fields).to.have.members(['end_date', 'status']);
    // A later contract's event has had its turn after these: exactly the events above arrived.
    const later = await create();
    await s.one('contract.created', later.id);
    expect(s.counts(c.id, 'contract')).to.deep.equal({
      'contract.created': 1,
      'contract.updated': 2,
      'contract.canceled': 0,
      'contract.renewed': 1,
      'contract.completed': 1,
    });
  });
});
