import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type pg from 'pg';
import type { client } from '../support/client.js';
import { type adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { adminCreator, expect400, salesRoutes } from '../support/sales.js';
import { openTenants } from '../support/session.js';
import type { Stack } from '../support/stack.js';

type Page = { total: number; records: any[]; next_cursor: string | null };

/** GET /deals through the gateway: filters, paging, visibility, tenancy, 400s (decision 0046). */
describe('GET /integrations/external/deals', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  const ref: Record<string, any> = {};
  const deals = {} as Record<'alpha' | 'beta' | 'gamma' | 'delta' | 'hidden' | 'assigned', { id: string; code: number }>;

  const routes = () => salesRoutes(call, 'deals', () => t);
  const create = (body: Record<string, unknown>, token = t.key.key) => routes().created(body, { token });
  const list = (query = '', token = t.key.key): Promise<Page> => routes().list(query, token);
  const titles = async (query: string, token = t.key.key) => (await list(query, token)).records.map((r) => r.title).sort();
  const q = (s: string) => encodeURIComponent(s);
  /** Every page of `query` by next_cursor, `take` at a time. */
  const allPages = async (query: string, take: number, token = t.key.key) => {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Page = await list(`?take=${take}${query}${cursor ? `&cursor=${cursor}` : ''}`, token);
      expect(page.records.length).to.be.at.most(take);
      ids.push(...page.records.map((r) => r.id));
      cursor = page.next_cursor;
      pages++;
      expect(pages, 'pages').to.be.below(50);
    } while (cursor);
    return ids;
  };

  before(async () => {
    ({ stack, call, admin, db, t, other } = await openTenants());
    const make = adminCreator(admin, () => t);
    ref.source = await make('lead-sources', { name: 'Fair' });
    ref.tag = await make('tags', { name: 'Hot' });
    ref.person = await make('persons', { name: 'Joana Prado', contacts: [{ type: 2, value: '+55 21 95555-1234' }] });
    ref.otherTag = await make('tags', { name: 'Hot' }, other);
    ref.colleague = await make('users', { name: 'Colleague', email: `c-${randomUUID()}@example.test` });
    ref.second = await make('pipelines', { name: 'Second', is_primary: false, stages: [{ name: 'Only' }] });
    ref.colleagueKey = (await make('keys', { created_by_user_id: ref.colleague.id, permissions: ['*'] })).key;
    ref.masterKey = (await make('keys', { created_by_user_id: t.master.id, permissions: ['*'] })).key;
    deals.alpha = await create({
      title: 'Alpha 100% deal',
      value: 1000,
      expected_close_date: '2027-01-10T12:00:00Z',
      visibility: 1,
      tags: [ref.tag.id],
    });
    deals.beta = await create({
      title: 'Beta',
      stage_id: t.pipeline.stages[1].id,
      crm_lead_source_id: ref.source.id,
      value: 5000.5,
      expected_close_date: '2027-02-01',
      visibility: 1,
      persons_id: [ref.person.id],
    });
    deals.gamma = await create({
      title: 'Gamma',
      responsible_id: ref.colleague.id,
      expected_close_date: '2027-03-01T00:00:00Z',
      marketing: { utm_source: 'fair', utm_campaign: 'spring' },
    });
    deals.delta = await create({ title: 'Delta', stage_id: ref.second.stages[0].id, value: 0 });
    deals.hidden = await create({ title: 'Colleague only' }, ref.colleagueKey);
    deals.assigned = await create({ title: 'Assigned to me', responsible_id: t.user.id }, ref.colleagueKey);
    await create({ title: 'Other company', value: 1000 }, other.key.key);
    const won = await admin('POST', `/companies/${t.company.id}/deals/${deals.delta.id}/win`, { user_id: t.user.id });
    expect(won.status, won.text).to.equal(200);
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  it('lists the deals the key creator may see, newest first, as DealSnapshots like GET /deals/{id} without the chat fields', async () => {
    const page = await list();
    expect(page.total).to.equal(5);
    expect(page.records.map((r) => r.title)).to.deep.equal(['Assigned to me', 'Delta', 'Gamma', 'Beta', 'Alpha 100% deal']);
    expect(page.next_cursor).to.equal(null);
    const beta = page.records.find((r) => r.id === deals.beta.id);
    expect(beta).to.include.all.keys(
      'deal_source',
      'lead',
      'expected_close_date',
      'temperature',
      'crm_gain_reasons',
      'stage',
      'responsible',
    );
    // The chat fields are the detail's and the events' only: a list asks chat nothing (decision 0130).
    expect(beta).to.not.have.any.keys(
      'lead_source',
      'deals',
      'pipeline_stages',
      'stage_durations',
      'associations_count',
      'has_channel_chat',
      'channel_chats',
      'has_whatsapp_chat',
      'whatsapp_chats',
    );
    expect(beta.deal_source.id).to.equal(ref.source.id);
    const detail = await call('GET', `/integrations/external/deals/${deals.beta.id}`, { token: t.key.key });
    const {
      pipeline_stages: _p,
      stage_durations: _s,
      associations_count: _a,
      has_channel_chat: _hc,
      channel_chats: _c,
      has_whatsapp_chat: _hw,
      whatsapp_chats: _w,
      ...snapshot
    } = detail.body;
    expect(beta).to.deep.equal(snapshot);
  });

  it('leaves out private deals the key creator may not see, from the records and the total', async () => {
    expect((await list()).records.map((r) => r.id)).to.not.include(deals.hidden.id);
    expect(await titles('', ref.colleagueKey)).to.deep.equal(['Alpha 100% deal', 'Assigned to me', 'Beta', 'Colleague only', 'Gamma']);
    const master = await list('', ref.masterKey);
    expect(master.total).to.equal(6);
    expect(master.records.map((r) => r.id)).to.include(deals.hidden.id);
    expect((await list(`?search=${q('colleague only')}`)).total).to.equal(0);
  });

  it("never lists another company's deals; another company's ids filter to nothing", async () => {
    expect(await titles('', other.key.key)).to.deep.equal(['Other company']);
    expect((await list('?value_min=1000')).records.map((r) => r.title)).to.not.include('Other company');
    expect((await list(`?stage_id=${other.pipeline.stages[0].id}`)).total).to.equal(0);
    expect((await list(`?pipeline_id=${other.pipeline.id}`)).total).to.equal(0);
    expect((await list(`?responsible_id=${other.user.id}`)).total).to.equal(0);
  });

  it('filters by tag and person, and searches the persons` names and contacts', async () => {
    expect(await titles(`?tag_id=${ref.tag.id}`)).to.deep.equal(['Alpha 100% deal']);
    expect(await titles(`?tag_id=${ref.otherTag.id}`)).to.deep.equal([]);
    expect(await titles(`?person_id=${ref.person.id}`)).to.deep.equal(['Beta']);
    expect(await titles('?search=joana')).to.deep.equal(['Beta']);
    expect(await titles('?search=95555')).to.deep.equal(['Beta']);
    expect(await titles(`?person_id=${ref.person.id}&tag_id=${ref.tag.id}`)).to.deep.equal([]);
  });

  it('filters by stage, pipeline, responsible, status and deal source', async () => {
    expect(await titles(`?stage_id=${t.pipeline.stages[1].id}`)).to.deep.equal(['Beta']);
    expect(await titles(`?pipeline_id=${ref.second.id}`)).to.deep.equal(['Delta']);
    expect(await titles(`?pipeline_id=${t.pipeline.id}`)).to.deep.equal(['Alpha 100% deal', 'Assigned to me', 'Beta', 'Gamma']);
    expect(await titles(`?responsible_id=${ref.colleague.id}`)).to.deep.equal(['Gamma']);
    expect(await titles(`?responsible_id=${t.user.id}`)).to.deep.equal(['Alpha 100% deal', 'Assigned to me', 'Beta', 'Delta']);
    expect(await titles('?status=2')).to.deep.equal(['Delta']);
    expect(await titles('?status=1')).to.deep.equal(['Alpha 100% deal', 'Assigned to me', 'Beta', 'Gamma']);
    expect(await titles('?status=3')).to.deep.equal([]);
    // Beta names the source; Gamma's acquisition (utm_source "fair") finds it by name.
    expect(await titles(`?deal_source_id=${ref.source.id}`)).to.deep.equal(['Beta', 'Gamma']);
  });

  it('filters by value and expected_close_date ranges, bounds included; deals without a value or date are outside any range', async () => {
    expect(await titles('?value_min=1000')).to.deep.equal(['Alpha 100% deal', 'Beta']);
    expect(await titles('?value_min=1000.01')).to.deep.equal(['Beta']);
    expect(await titles('?value_max=1000')).to.deep.equal(['Alpha 100% deal', 'Delta']);
    expect(await titles('?value_min=0&value_max=0')).to.deep.equal(['Delta']);
    expect(await titles('?value_min=5000.5&value_max=5000.5')).to.deep.equal(['Beta']);
    expect(await titles(`?expected_close_from=2027-02-01`)).to.deep.equal(['Beta', 'Gamma']);
    expect(await titles(`?expected_close_to=${q('2027-01-10T12:00:00Z')}`)).to.deep.equal(['Alpha 100% deal']);
    expect(await titles(`?expected_close_from=2027-01-11&expected_close_to=2027-02-28`)).to.deep.equal(['Beta']);
  });

  it('filters by created and updated ranges', async () => {
    const future = new Date(Date.now() + 3600_000).toISOString();
    const past = new Date(Date.now() - 3600_000).toISOString();
    expect((await list(`?created_from=${q(future)}`)).total).to.equal(0);
    expect((await list(`?created_from=${q(past)}&created_to=${q(future)}`)).total).to.equal(5);
    expect((await list(`?updated_to=${q(past)}`)).total).to.equal(0);
    const beforePut = new Date(Date.now() - 1).toISOString();
    const put = await call('PUT', `/integrations/external/deals/${deals.gamma.id}`, {
      token: t.key.key,
      body: { title: 'Gamma', temperature: 3 },
    });
    expect(put.status, put.text).to.equal(200);
    expect(await titles(`?updated_from=${q(beforePut)}`)).to.deep.equal(['Gamma']);
    expect(await titles(`?updated_to=${q(beforePut)}`)).to.not.include('Gamma');
    expect((await list(`?updated_to=${q(future)}`)).total).to.equal(5);
  });

  it('searches the title without letter case, % and _ matching themselves, and combines filters', async () => {
    expect(await titles('?search=ALPHA')).to.deep.equal(['Alpha 100% deal']);
    expect(await titles(`?search=${q('100%')}`)).to.deep.equal(['Alpha 100% deal']);
    expect(await titles(`?search=${q('%')}`)).to.deep.equal(['Alpha 100% deal']);
    expect(await titles('?search=_')).to.deep.equal([]);
    expect(await titles('?search=A&status=1&value_min=2000')).to.deep.equal(['Beta']);
  });

  it('pages with next_cursor without duplicates or omissions, stable while deals are added, and with skip', async () => {
    const everything = (await list('?take=100')).records.map((r) => r.id);
    expect(await allPages('', 2)).to.deep.equal(everything);
    const first = await list('?take=2');
    expect(first.total).to.equal(5);
    const added = await create({ title: 'Added between pages', visibility: 1 });
    const second = await list(`?take=3&cursor=${first.next_cursor}`);
    expect([...first.records, ...second.records].map((r) => r.id)).to.deep.equal(everything);
    expect(second.next_cursor).to.equal(null);
    expect((await list('?take=1')).records[0].id).to.equal(added.id);
    const skipped = await list(`?take=1&skip=1&cursor=${first.next_cursor}`);
    expect(skipped.records[0].id).to.equal(everything[3]);
    expect((await list('?skip=-5&take=1')).records[0].id).to.equal(added.id);
    expect((await list('?skip=100')).records).to.deep.equal([]);
    // Above the maximum, take is capped as the chat list does (issue 23 item 11).
    expect((await list('?take=101')).records).to.have.length(6);
    await db.query('delete from crm.deals where id = $1', [added.id]);
  });

  it('pages through deals sharing a created_at, and through microsecond timestamps, by (created_at, id)', async () => {
    const same = await seedTenant(call, stack.adminToken);
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await create({ title: `Same ${i}` }, same.key.key));
    const ids = made.map((d) => d.id);
    await db.query(`update crm.deals set created_at = '2026-05-01T10:00:00.123456Z' where id = any($1::uuid[])`, [ids.slice(0, 4)]);
    await db.query(`update crm.deals set created_at = '2026-05-01T10:00:00.123457Z' where id = any($1::uuid[])`, [ids.slice(4)]);
    const everything = (await list('?take=100', same.key.key)).records.map((r) => r.id);
    expect(everything).to.have.length(7);
    expect(everything.slice(0, 3)).to.have.members(ids.slice(4));
    for (const take of [1, 2, 3]) expect(await allPages('', take, same.key.key), `take=${take}`).to.deep.equal(everything);
  });

  it('refuses bad parameters with a 400 naming them', async () => {
    for (const [query, field] of [
      ['?status=4', 'status'],
      ['?take=0', 'take'],
      ['?take=ten', 'take'],
      ['?stage_id=nope', 'stage_id'],
      ['?deal_source_id=nope', 'deal_source_id'],
      ['?tag_id=nope', 'tag_id'],
      ['?person_id=1', 'person_id'],
      ['?value_min=abc', 'value_min'],
      ['?value_max=1e3', 'value_max'],
      ['?expected_close_from=tomorrow', 'expected_close_from'],
      ['?expected_close_to=2027-13-01', 'expected_close_to'],
      ['?created_from=yesterday', 'created_from'],
      ['?updated_to=soon', 'updated_to'],
      ['?search=', 'search'],
      ['?cursor=garbage', 'cursor'],
      ['?only_new=true', 'only_new'],
      [`?lead_source_id=${randomUUID()}`, 'lead_source_id'],
      ['?color=red', 'color'],
    ] as const) {
      expect400(await call('GET', `/integrations/external/deals${query}`, { token: t.key.key }), field);
    }
  });

  it('needs crm/deal.read', async () => {
    const key = async (permissions: string[]) =>
      (await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions })).body.key;
    const leadOnly = await call('GET', '/integrations/external/deals', { token: await key(['crm/lead.read', 'crm/deal.create']) });
    expect(leadOnly.status, leadOnly.text).to.equal(403);
    expect(leadOnly.body.message).to.contain('crm/deal.read');
    expect((await list('', await key(['crm/deal.read']))).total).to.equal(5);
    expect((await call('GET', '/integrations/external/deals')).status).to.equal(401);
  });
});
