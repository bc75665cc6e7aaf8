import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

describe('GET /integrations/external/leads and GET /integrations/external/custom-fields', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let t: Tenant;
  let other: Tenant;
  const ref: Record<string, any> = {};
  const leads: Record<string, { id: string; code: number }> = {};

  const create = async (body: Record<string, unknown>, token = t.key.key) => {
    const res = await call('POST', '/integrations/external/leads', { token, body });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number };
  };
  const list = async (query = '', token = t.key.key) => {
    const res = await call('GET', `/integrations/external/leads${query}`, { token });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.have.all.keys('total', 'records', 'next_cursor');
    return res.body as { total: number; records: any[]; next_cursor: string | null };
  };
  const titles = async (query: string) => (await list(query)).records.map((r) => r.title).sort();

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    t = await seedTenant(call, stack.adminToken);
    other = await seedTenant(call, stack.adminToken);
    const make = async (path: string, body: unknown, tenant = t) =>
      (await admin('POST', `/companies/${tenant.company.id}/${path}`, body)).body;
    ref.tag = await make('tags', { name: 'Hot' });
    ref.source = await make('lead-sources', { name: 'Fair' });
    ref.colleague = await make('users', { name: 'Colleague', email: `c-${randomUUID()}@example.test` });
    ref.person = await make('persons', { name: 'Joana Prado', contacts: [{ type: 2, value: '+55 21 95555-1234' }] });
    ref.second = await make('pipelines', { name: 'Second', is_primary: false, stages: [{ name: 'Only' }] });
    ref.colleagueKey = (await make('keys', { created_by_user_id: ref.colleague.id, permissions: ['*'] })).key;
    leads.alpha = await create({ title: 'Alpha deal', tags: [ref.tag.id], visibility: 1 });
    leads.beta = await create({ title: 'Beta', stage_id: t.pipeline.stages[1].id, crm_lead_source_id: ref.source.id, visibility: 1 });
    leads.gamma = await create({ title: 'Gamma', responsible_id: ref.colleague.id, persons_id: [ref.person.id] });
    leads.delta = await create({ title: 'Delta', stage_id: ref.second.stages[0].id });
    leads.hidden = await create({ title: 'Colleague only' }, ref.colleagueKey);
    await create({ title: 'Other company' }, other.key.key);
    await admin('POST', `/companies/${t.company.id}/leads/${leads.delta.id}/win`, { user_id: t.user.id });
  });
  after(() => stack?.stop());

  it('lists the leads the key creator may see, newest first, as LeadSnapshots', async () => {
    const page = await list();
    expect(page.total).to.equal(4);
    expect(page.records.map((r) => r.title)).to.deep.equal(['Delta', 'Gamma', 'Beta', 'Alpha deal']);
    expect(page.records[0]).to.include.all.keys('id', 'code', 'title', 'stage', 'responsible', 'tags', 'custom_fields', 'status');
    expect(page.next_cursor).to.equal(null);
    expect((await list('', ref.colleagueKey)).records.map((r) => r.title).sort()).to.deep.equal([
      'Alpha deal',
      'Beta',
      'Colleague only',
      'Gamma',
    ]);
  });

  it('filters by stage, pipeline, responsible, status, tag, lead source and person', async () => {
    expect(await titles(`?stage_id=${t.pipeline.stages[1].id}`)).to.deep.equal(['Beta']);
    expect(await titles(`?pipeline_id=${ref.second.id}`)).to.deep.equal(['Delta']);
    expect(await titles(`?responsible_id=${ref.colleague.id}`)).to.deep.equal(['Gamma']);
    expect(await titles('?status=2')).to.deep.equal(['Delta']);
    expect(await titles('?status=1')).to.deep.equal(['Alpha deal', 'Beta', 'Gamma']);
    expect(await titles(`?tag_id=${ref.tag.id}`)).to.deep.equal(['Alpha deal']);
    expect(await titles(`?lead_source_id=${ref.source.id}`)).to.deep.equal(['Beta']);
    expect(await titles(`?person_id=${ref.person.id}`)).to.deep.equal(['Gamma']);
    expect(await titles(`?person_id=${ref.person.id}&responsible_id=${t.user.id}`)).to.deep.equal([]);
  });

  it('filters by created and updated ranges', async () => {
    const future = new Date(Date.now() + 3600_000).toISOString();
    const past = new Date(Date.now() - 3600_000).toISOString();
    expect((await list(`?created_from=${encodeURIComponent(future)}`)).total).to.equal(0);
    expect((await list(`?created_from=${encodeURIComponent(past)}&created_to=${encodeURIComponent(future)}`)).total).to.equal(4);
    expect((await list(`?updated_to=${encodeURIComponent(past)}`)).total).to.equal(0);
  });

  it('searches the title, the persons and their contacts', async () => {
    expect(await titles('?search=alpha')).to.deep.equal(['Alpha deal']);
    expect(await titles('?search=joana')).to.deep.equal(['Gamma']);
    expect(await titles('?search=95555')).to.deep.equal(['Gamma']);
    expect(await titles('?search=%25')).to.deep.equal([]);
  });

  it('only_new=true leaves out the leads the key creator has viewed', async () => {
    const fresh = await create({ title: 'Unseen', visibility: 1 });
    expect(await titles('?only_new=true')).to.include('Unseen');
    await call('GET', `/integrations/external/leads/${fresh.id}`, { token: t.key.key });
    expect(await titles('?only_new=true')).to.not.include('Unseen');
    expect(await titles('?only_new=false')).to.include('Unseen');
    expect((await list('?only_new=true', ref.colleagueKey)).records.map((r) => r.title)).to.include('Unseen');
  });

  it('pages with take and next_cursor, and with skip', async () => {
    const first = await list('?take=2&status=1');
    expect(first.records).to.have.length(2);
    expect(first.total).to.be.greaterThan(2);
    expect(first.next_cursor).to.be.a('string');
    const second = await list(`?take=2&status=1&cursor=${first.next_cursor}`);
    const seen = [...first.records, ...second.records].map((r) => r.id);
    expect(new Set(seen).size).to.equal(seen.length);
    const skipped = await list('?take=1&skip=1&status=1');
    expect(skipped.records[0].id).to.equal(first.records[1].id);
    expect((await list('?skip=-5&take=1')).records).to.have.length(1);
    // Above the maximum, take is capped as the chat list does (issue 23 item 11): the whole list in one page.
    const capped = await list('?take=101&status=1');
    expect(capped.records).to.have.length(first.total);
    expect(capped.next_cursor).to.equal(null);
  });

  it('refuses bad parameters with a 400 naming them', async () => {
    for (const [query, field] of [
      ['?status=4', 'status'],
      ['?take=0', 'take'],
      ['?stage_id=nope', 'stage_id'],
      ['?created_from=yesterday', 'created_from'],
      ['?cursor=garbage', 'cursor'],
      ['?color=red', 'color'],
    ]) {
      const res = await call('GET', `/integrations/external/leads${query}`, { token: t.key.key });
      expect(res.status, query).to.equal(400);
      expect(res.body.message, query).to.contain(field);
    }
  });

  describe('GET /custom-fields', () => {
    it('lists the company`s fields by entity, with options, in the admin API`s shape', async () => {
      const make = async (body: unknown) => (await admin('POST', `/companies/${t.company.id}/custom-fields`, body)).body;
      const a = await make({ entity: 'lead', name: 'Segment', type: 'select', required: true, options: ['SMB', 'Enterprise'] });
      const b = await make({ entity: 'deal', name: 'Contract', type: 'file' });
      await admin('POST', `/companies/${other.company.id}/custom-fields`, { entity: 'lead', name: 'Foreign', type: 'text' });
      const all = await call('GET', '/integrations/external/custom-fields', { token: t.key.key });
      expect(all.status, all.text).to.equal(200);
      expect(all.body.total).to.equal(2);
      expect(all.body.records).to.deep.equal([a, b]);
      expect(all.body.records[0]).to.include({ entity: 'lead', field_type: 4, required: true });
      const leadsOnly = await call('GET', '/integrations/external/custom-fields?entity=lead', { token: t.key.key });
      expect(leadsOnly.body.records.map((f: any) => f.name)).to.deep.equal(['Segment']);
      expect((await call('GET', '/integrations/external/custom-fields?entity=task', { token: t.key.key })).status).to.equal(400);
    });
    it('pages with a cursor, and caps a take above 500 (issue 23 item 11)', async () => {
      const page = async (query: string) => {
        const res = await call('GET', `/integrations/external/custom-fields${query}`, { token: t.key.key });
        expect(res.status, res.text).to.equal(200);
        return res.body;
      };
      const all = await page('?take=501');
      expect(all.records.length).to.equal(all.total);
      expect(all.total).to.be.greaterThan(1);
      expect(all.next_cursor).to.equal(null);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const p = await page(`?take=1${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...p.records.map((f: any) => f.id));
        cursor = p.next_cursor;
      } while (cursor && seen.length <= all.total);
      expect(seen).to.deep.equal(all.records.map((f: any) => f.id));
      expect((await call('GET', '/integrations/external/custom-fields?cursor=garbage', { token: t.key.key })).status).to.equal(400);
    });
    it('needs crm/custom-fields.read', async () => {
      const key = (
        await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['crm/lead.read'] })
      ).body.key;
      expect((await call('GET', '/integrations/external/custom-fields', { token: key })).status).to.equal(403);
    });
  });
});
