import { randomUUID } from 'node:crypto';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { startReceiver } from '../support/receiver.js';
import { DEAL_SNAPSHOT_FIELDS, expect400 } from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

/** POST /deals and GET /deals/{id} through the gateway: defaults, 400s, tenancy, visibility, idempotency, deal.created. */
describe('POST and GET /integrations/external/deals', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let t: Tenant;
  let other: Tenant;
  let colleagueKey: string;

  const create = (body: unknown, opts: { tenant?: Tenant; key?: string; token?: string } = {}) =>
    call('POST', '/integrations/external/deals', {
      token: opts.token ?? (opts.tenant ?? t).key.key,
      body,
      headers: opts.key === undefined ? {} : { 'x-idempotency-key': opts.key },
    });
  const created = async (body: Record<string, unknown>, opts: { tenant?: Tenant; key?: string; token?: string } = {}) => {
    const res = await create({ title: 'Deal', ...body }, opts);
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number; title: string; measurement_consent: string };
  };
  const get = (ref: string | number, token = t.key.key) => call('GET', `/integrations/external/deals/${ref}`, { token });

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    receiver = await startReceiver();
    t = await seedTenant(call, stack.adminToken);
    other = await seedTenant(call, stack.adminToken);
    const sub = await admin('POST', `/companies/${t.company.id}/webhooks`, {
      url: receiver.url(`/${t.company.id}`),
      events: ['deal.created'],
    });
    expect(sub.status, sub.text).to.equal(201);
    const colleague = (
      await admin('POST', `/companies/${t.company.id}/users`, { name: 'Colleague', email: `c-${randomUUID()}@example.test` })
    ).body;
    const key = await admin('POST', `/companies/${t.company.id}/keys`, {
      created_by_user_id: colleague.id,
      permissions: ['crm/deal.read', 'crm/deal.create'],
    });
    expect(key.status, key.text).to.equal(201);
    colleagueKey = key.body.key;
  });
  after(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  it('a title-only deal gets the defaults: first stage of the primary pipeline, the key creator, open, private, GRANTED', async () => {
    const deal = await created({ title: '  First deal ' });
    expect(deal).to.deep.equal({ id: deal.id, code: deal.code, title: 'First deal', measurement_consent: 'GRANTED' });
    const second = await created({});
    expect(second.code).to.equal(deal.code + 1);
    const res = await get(deal.id);
    expect(res.status, res.text).to.equal(200);
    const d = res.body;
    expect(d).to.include.all.keys(...DEAL_SNAPSHOT_FIELDS, 'pipeline_stages');
    expect(d).to.not.have.any.keys('lead_source', 'deals');
    expect(d).to.include({ id: deal.id, code: deal.code, title: 'First deal', status: 1, visibility: 0, value: null, temperature: null });
    expect(d).to.include({
      expected_close_date: null,
      lead: null,
      crm_gain_reason: null,
      deal_source: null,
      measurement_consent: 'GRANTED',
    });
    expect(d.stage).to.include({ id: t.pipeline.stages[0].id, name: 'New' });
    expect(d.responsible.id).to.equal(t.user.id);
    expect(d.created_by.id).to.equal(t.user.id);
    expect(d.pipeline_stages.map((s: any) => s.name)).to.deep.equal(['New', 'Qualified', 'Proposal']);
    expect((await get(deal.code)).body.id).to.equal(deal.id);
  });

  it('takes value, expected_close_date, temperature, stage, responsible, visibility, quality and the lead source', async () => {
    const source = (await admin('POST', `/companies/${t.company.id}/lead-sources`, { name: 'Partner' })).body;
    const deal = await created({
      value: 1234.5,
      expected_close_date: '2027-03-01T12:00:00Z',
      temperature: 3,
      stage_id: t.pipeline.stages[2].id,
      responsible_id: t.master.id,
      visibility: 1,
      quality_rating: 4,
      quality_reason: 'Budget approved',
      crm_lead_source_id: source.id,
    });
    const d = (await get(deal.id)).body;
    expect(d).to.include({
      value: 1234.5,
      expected_close_date: '2027-03-01T12:00:00.000Z',
      temperature: 3,
      visibility: 1,
      quality_rating: 4,
    });
    expect(d.stage.id).to.equal(t.pipeline.stages[2].id);
    expect(d.responsible.id).to.equal(t.master.id);
    expect(d.deal_source).to.include({ id: source.id, name: 'Partner' });
    expect(d.valuation).to.include({ current_value: 1234.5, mode: 'CURRENT' });
  });

  it('each invalid field is a 400 naming it, and nothing is created', async () => {
    const before = await created({ title: 'Before' });
    expect400(await create({}), 'title');
    expect400(await create({ title: 'x'.repeat(151) }), 'title');
    expect400(await create({ title: 'D', value: 'ten' }), 'value');
    expect400(await create({ title: 'D', value: -1 }), 'value');
    expect400(await create({ title: 'D', expected_close_date: 'soon' }), 'expected_close_date');
    expect400(await create({ title: 'D', temperature: 1.5 }), 'temperature');
    expect400(await create({ title: 'D', stage_id: 'nope' }), 'stage_id');
    expect400(await create({ title: 'D', stage_id: other.pipeline.stages[0].id }), 'stage_id');
    expect400(await create({ title: 'D', responsible_id: other.user.id }), 'responsible_id');
    expect400(await create({ title: 'D', visibility: 2 }), 'visibility');
    expect400(await create({ title: 'D', quality_rating: 6 }), 'quality_rating');
    expect400(await create({ title: 'D', phone: '123' }), 'phone');
    expect400(await create({ title: 'D', lead_source: 'x' }), 'lead_source');
    expect400(await create({ title: 'D', organization_id: randomUUID(), organization: { name: 'O' } }), 'organization_id');
    expect400(await create({ title: 'D', crm_lead_source_id: randomUUID() }), 'crm_lead_source_id');
    expect400(await create({ title: 'D', tags: [randomUUID()] }), 'tags[0]');
    expect400(await create({ title: 'D', idempotency_key: 'k'.repeat(256) }), 'idempotency_key');
    const after = await created({ title: 'After' });
    expect(after.code).to.equal(before.code + 1);
  });

  it("another company's deal is a 404 by id and by code; a private deal of a colleague is a 403", async () => {
    const mine = await created({ title: 'Mine' });
    const res = await get(mine.id, other.key.key);
    expect(res.status, res.text).to.equal(404);
    expect(res.body).to.include({ statusCode: 404, error: 'Not Found' });
    const theirs = await created({ title: 'Theirs' }, { tenant: other });
    expect((await get(theirs.code, other.key.key)).status).to.equal(200);
    expect((await get(theirs.id)).status).to.equal(404);
    expect((await get(randomUUID())).status).to.equal(404);
    expect((await get('abc')).status).to.equal(404);
    expect((await get(mine.id, colleagueKey)).status).to.equal(403);
    const team = await created({ title: 'Team', visibility: 1 });
    expect((await get(team.id, colleagueKey)).status).to.equal(200);
  });

  it('a key without crm/deal.create is a 403', async () => {
    const key = await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/lead.create'] });
    const res = await create({ title: 'D' }, { token: key.body.key });
    expect(res.status, res.text).to.equal(403);
  });

  it('idempotency: a replay answers the first creation; a key whose creation failed stays consumed (409); keys are per company', async () => {
    const key = `k-${randomUUID()}`;
    const first = await created({ title: 'Once' }, { key });
    const replay = await created({ title: 'Other body' }, { key });
    expect(replay).to.deep.equal(first);
    const viaBody = await created({ title: 'Once', idempotency_key: key });
    expect(viaBody.id).to.equal(first.id);
    const elsewhere = await created({ title: 'Once' }, { tenant: other, key });
    expect(elsewhere.id).to.not.equal(first.id);
    const failing = `f-${randomUUID()}`;
    expect400(await create({ title: 'D', responsible_id: randomUUID() }, { key: failing }), 'responsible_id');
    const again = await create({ title: 'D' }, { key: failing });
    expect(again.status, again.text).to.equal(409);
    expect(again.body).to.include({ statusCode: 409, error: 'Conflict' });
  });

  it('deal.created reaches a real receiver with the DealSnapshot, equal to the detail', async () => {
    const deal = await created({ title: 'Evented', value: 99, temperature: 2, expected_close_date: '2027-01-02' });
    const got = await eventually(() => {
      const r = receiver.received.find((x) => x.body.event_key === 'deal.created' && x.body.payload.deal?.id === deal.id);
      return r;
    }, 15_000);
    expect(got.path).to.equal(`/${t.company.id}`);
    expect(got.headers['x-svc-event']).to.equal('deal.created');
    const payload = got.body.payload;
    expect(payload.deal).to.include.all.keys(...DEAL_SNAPSHOT_FIELDS);
    expect(payload.deal).to.include({ id: deal.id, code: deal.code, title: 'Evented', status: 1, value: 99, temperature: 2 });
    expect(payload.deal.expected_close_date).to.equal('2027-01-02T00:00:00.000Z');
    const { pipeline_stages: _s, stage_durations: _d, associations_count: _a, ...detail } = (await get(deal.id)).body;
    expect(payload.deal).to.deep.equal(detail);
  });
});
