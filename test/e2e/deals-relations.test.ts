import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { startReceiver } from '../support/receiver.js';
import {
  adminCreator,
  DEAL_SNAPSHOT_FIELDS,
  deliveredPayload,
  deliveriesOf,
  expect400,
  expectSeededRelations,
  expectSizeSetTo12,
  outboxKeysOf,
  salesRoutes,
  seedSalesReferences,
} from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

/**
 * POST /deals with the relations of the lead contract (tags, persons, organization, custom fields, followers,
 * note, marketing) and GET /deals/{id} showing them, through the gateway (decision 0051).
 */
describe('POST /integrations/external/deals: relations, their rules and the detail that shows them', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  let deals: ReturnType<typeof salesRoutes>;
  let make: ReturnType<typeof adminCreator>;
  const ref: Record<string, any> = {};

  const rows = async (sql: string, params: unknown[] = []) => (await db.query(sql, params)).rows;
  const lastCode = async (tenant = t) =>
    Number(
      (await rows(`select value from crm.company_sequences where company_id = $1 and entity = 'deal'`, [tenant.company.id]))[0]?.value ?? 0,
    );
  /** What a refused creation must not have written. */
  const written = async () => ({
    code: await lastCode(),
    ...(
      await rows(`select (select count(*)::int from crm.deals) deals, (select count(*)::int from crm.persons) persons,
        (select count(*)::int from crm.organizations) orgs, (select count(*)::int from crm.deal_tags) tags,
        (select count(*)::int from crm.deal_participants) participants, (select count(*)::int from crm.custom_field_values) answers,
        (select count(*)::int from crm.marketing_acquisitions) acquisitions,
        (select count(*)::int from crm.outbox where event_key like 'deal.%') events`)
    )[0],
  });
  const outboxOf = (dealId: string) => outboxKeysOf(db, dealId);

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
    make = adminCreator(admin, () => t);
    const sub = await admin('POST', `/companies/${t.company.id}/webhooks`, {
      url: receiver.url(`/${t.company.id}`),
      events: ['deal.created', 'deal.updated', 'deal.tag_added', 'deal.custom_field_updated'],
    });
    expect(sub.status, sub.text).to.equal(201);
    Object.assign(ref, await seedSalesReferences(make, 'deal', other));
    ref.leadOnly = await make('custom-fields', { entity: 'lead', name: 'Lead only', type: 'text' });
    ref.colleagueKey = (
      await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: ref.colleague.id, permissions: ['crm/deal.read'] })
    ).body.key;
  });
  after(async () => {
    await receiver?.close();
    await db?.end();
    await stack?.stop();
  });

  it('stores tags (a repeated one once), persons_id, organization_id and shows them as the lead detail does', async () => {
    const deal = await deals.created({
      title: 'Linked',
      tags: [ref.hot.id, ref.cold.id, ref.hot.id],
      persons_id: [ref.ana.id],
      organization_id: ref.acme.id,
    });
    const d = await deals.detail(deal.id);
    expect(d).to.include.all.keys(...DEAL_SNAPSHOT_FIELDS, 'pipeline_stages', 'stage_durations', 'associations_count');
    expectSeededRelations(d, ref);
    expect(d.stage_durations.map((s: any) => s.stage_name)).to.deep.equal(['New']);
    expect(d.associations_count).to.include({ notes: 0, deals: 0 });
    expect(await rows('select tag_id from crm.deal_tags where deal_id = $1', [deal.id])).to.have.length(2);
    expect(await rows('select tag_id from crm.lead_tags where lead_id = $1', [deal.id])).to.have.length(0);
  });

  it('an organization object creates the organization in the company', async () => {
    const deal = await deals.created({ organization: { name: 'NewCo', document: '123' } });
    const d = await deals.detail(deal.id);
    const [org] = await rows('select name, document, company_id from crm.organizations where id = $1', [d.organization.id]);
    expect(org).to.deep.equal({ name: 'NewCo', document: '123', company_id: t.company.id });
  });

  const refused: [string, (r: Record<string, any>) => Record<string, unknown>, string][] = [
    ['organization_id with organization', (r) => ({ organization_id: r.acme.id, organization: { name: 'X' } }), 'organization_id'],
    ['an unknown tag', () => ({ tags: [randomUUID()] }), 'tags[0]'],
    ['another company`s tag', (r) => ({ tags: [r.hot.id, r.foreignTag.id] }), 'tags[1]'],
    ['a malformed tag id', () => ({ tags: ['nope'] }), 'tags.0'],
    ['an unknown person', () => ({ persons_id: [randomUUID()] }), 'persons_id[0]'],
    ['another company`s person', (r) => ({ persons_id: [r.foreignPerson.id] }), 'persons_id[0]'],
    ['an unknown organization', () => ({ organization_id: randomUUID() }), 'organization_id'],
    ['another company`s organization', (r) => ({ organization_id: r.foreignOrg.id }), 'organization_id'],
    ['a person without a name to create', () => ({ person: { contacts: [{ type: 1, value: 'x@y.test' }] } }), 'person.name'],
    ['a file field', (r) => ({ custom_fields: [{ id: r.contract.id, value: 'file-1' }] }), 'custom_fields[0].id'],
    ['a lead field', (r) => ({ custom_fields: [{ id: r.leadOnly.id, value: 'x' }] }), 'custom_fields[0].id'],
    ['an unknown field', () => ({ custom_fields: [{ id: randomUUID(), value: 'x' }] }), 'custom_fields[0].id'],
    ['a non-number', (r) => ({ custom_fields: [{ id: r.size.id, value: 'many' }] }), 'custom_fields[0].value'],
    ['an option of another field', (r) => ({ custom_fields: [{ id: r.segment.id, option_id: r.channels.options[0].id }] }), 'option_id'],
    ['a follower without user_id', () => ({ followers: [{ role_id: randomUUID() }] }), 'followers.0.user_id'],
    ['an empty note', () => ({ note: { content: '  ' } }), 'note.content'],
  ];
  for (const [what, body, field] of refused) {
    it(`refuses ${what} with a 400 naming ${field}, nothing written`, async () => {
      const before = await written();
      expect400(await deals.create({ title: 'Refused', tags: [ref.hot.id], persons_id: [ref.ana.id], ...body(ref) }), field);
      expect(await written()).to.deep.equal(before);
    });
  }

  it('stores custom field answers of every kind and requires the required deal fields (not the lead ones)', async () => {
    const deal = await deals.created({
      custom_fields: [
        { id: ref.size.id, value: '42' },
        { id: ref.segment.id, option_id: ref.segment.options[1].id },
        { id: ref.channels.id, option_ids: [ref.channels.options[2].id, ref.channels.options[0].id] },
      ],
    });
    const d = await deals.detail(deal.id);
    expect(
      d.custom_fields.map((f: any) => [f.field_name, f.field_type, f.answers.map((a: any) => a.option_value ?? a.value)]),
    ).to.deep.equal([
      ['Size', 2, ['42']],
      ['Segment', 4, ['Enterprise']],
      ['Channels', 5, ['Web', 'Store']],
    ]);
    const tenant = await seedTenant(call, stack.adminToken);
    const must = await make('custom-fields', { entity: 'deal', name: 'Budget', type: 'text', required: true }, tenant);
    await make('custom-fields', { entity: 'lead', name: 'Lead must', type: 'text', required: true }, tenant);
    expect400(await deals.create({ title: 'x' }, { tenant }), 'Budget');
    expect400(await deals.create({ title: 'x', custom_fields: [{ id: must.id, value: ' ' }] }, { tenant }), 'Budget');
    expect(await lastCode(tenant)).to.equal(0);
    expect((await deals.created({ custom_fields: [{ id: must.id, value: '10k' }] }, { tenant })).code).to.equal(1);
  });

  it('deduplicates the person by the checked contact types and adds the contacts it lacks', async () => {
    const found = await make('persons', { name: 'Bia', contacts: [{ type: 1, value: 'bia@example.test' }] });
    const personsBefore = (await rows('select count(*)::int n from crm.persons'))[0].n;
    const deal = await deals.created({
      persons_id: [ref.ana.id],
      person: {
        name: 'Beatriz',
        contacts: [
          { type: 1, value: 'BIA@example.test' },
          { type: 2, value: '+55 11 98888-7777' },
        ],
        avoid_duplicate: true,
        duplicate_check_types: [1],
      },
    });
    expect((await rows('select count(*)::int n from crm.persons'))[0].n).to.equal(personsBefore);
    const d = await deals.detail(deal.id);
    expect(d.participants.map((p: any) => [p.main, p.person.id])).to.deep.equal([
      [true, found.id],
      [false, ref.ana.id],
    ]);
    expect(d.participants[0].person.contacts.map((c: any) => [c.type, c.value])).to.deep.equal([
      [1, 'bia@example.test'],
      [2, '+55 11 98888-7777'],
    ]);
  });

  it('saves followers (a repeated user once) and the note after the record; followers see the private deal', async () => {
    const deal = await deals.created({
      followers: [{ user_id: ref.colleague.id, role_id: ref.role.id }, { user_id: ref.colleague.id }, { user_id: t.master.id }],
      note: { content: 'Called on Monday', is_pinned: true },
    });
    const d = await deals.detail(deal.id);
    expect(d.followers).to.deep.equal([
      { role: { id: ref.role.id, name: 'Helper' }, user: { id: ref.colleague.id, name: 'Colleague', avatar: null }, notes: null },
      { role: null, user: { id: t.master.id, name: 'Master', avatar: null }, notes: null },
    ]);
    expect(d.associations_count.notes).to.equal(1);
    const [note] = await rows('select content, is_pinned, automatic, created_by_id from crm.deal_notes where deal_id = $1', [deal.id]);
    expect(note).to.deep.equal({ content: 'Called on Monday', is_pinned: true, automatic: false, created_by_id: t.user.id });
    expect((await deals.get(deal.id, ref.colleagueKey)).status).to.equal(200);
    const unfollowed = await deals.created({ title: 'Private' });
    expect((await deals.get(unfollowed.id, ref.colleagueKey)).status).to.equal(403);
    expect((await deals.get(deal.id, other.key.key)).status).to.equal(404);
    expect(await outboxOf(deal.id)).to.deep.equal(['deal.created', 'deal.updated']);
  });

  it('an unknown follower user or role is a 400 naming it before anything is written', async () => {
    const before = await lastCode();
    const res = await deals.create({ title: 'Follower fails', followers: [{ user_id: other.user.id }], note: { content: 'n' } });
    expect400(res, 'followers[0].user_id');
    expect400(await deals.create({ title: 'Role fails', followers: [{ user_id: ref.colleague.id, role_id: randomUUID() }] }), 'role_id');
    expect(await lastCode()).to.equal(before);
  });

  it('an inactive responsible hands the deal to the master user with an automatic note', async () => {
    const away = await make('users', { name: 'Away', email: `away-${randomUUID()}@example.test` });
    await admin('PATCH', `/companies/${t.company.id}/users/${away.id}`, { active: false });
    const deal = await deals.created({ responsible_id: away.id });
    const d = await deals.detail(deal.id);
    expect(d.responsible.id).to.equal(t.master.id);
    expect(d.associations_count.notes).to.equal(1);
    const notes = await rows('select content, automatic from crm.deal_notes where deal_id = $1', [deal.id]);
    expect(notes).to.have.length(1);
    expect(notes[0]).to.include({ automatic: true });
    expect(notes[0].content).to.contain('Away').and.contain('the deal was assigned');
  });

  it('marketing stores the acquisition snapshot: marketing_lead_source and deal_source show it', async () => {
    const deal = await deals.created({
      marketing: {
        svc_source: 'Newsletter',
        svc_campaign: 'Spring',
        utm_term: 'crm software',
        url_conversion: 'https://example.test/landing?utm_medium=email&gclid=abc#top',
      },
    });
    const d = await deals.detail(deal.id);
    expect(d.marketing_lead_source).to.not.equal(null);
    expect(d.marketing_lead_source).to.include({
      campaing_name: 'Spring',
      utm_search_term: 'crm software',
      utm_medium: 'email',
      gclid: 'abc',
      url_conversion: 'https://example.test/landing',
      measurement_consent: null,
    });
    expect(d.marketing_lead_source.lead_source.name).to.equal('Newsletter');
    expect(d.deal_source.name).to.equal('Newsletter');
    const acquisitions = await rows('select lead_id, deal_id, svc_source from crm.marketing_acquisitions where deal_id = $1', [deal.id]);
    expect(acquisitions).to.deep.equal([{ lead_id: null, deal_id: deal.id, svc_source: 'Newsletter' }]);
    const denied = await deals.created({ marketing: { measurement_consent: 'DENIED', svc_campaign: 'X' } });
    expect(denied.measurement_consent).to.equal('DENIED');
    expect((await deals.detail(denied.id)).marketing_lead_source.measurement_consent).to.equal('DENIED');
  });

  it('a conversion tool named by the acquisition is created when the company has none of that name (once, without case)', async () => {
    const tools = async (tenant: Tenant) => {
      const res = await admin('GET', `/companies/${tenant.company.id}/conversion-tools`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return (res.body.records as { name: string }[]).map((r) => r.name);
    };
    expect(await tools(t)).to.deep.equal([]);
    // Read from url_conversion, as rule 3 fills svc_conversion_tool.
    const first = await deals.created({ marketing: { url_conversion: 'https://example.test/lp?svc_conversion_tool=Landing%20Page%20A' } });
    expect((await deals.detail(first.id)).marketing_lead_source.conversion_tool_name).to.equal('Landing Page A');
    expect(await tools(t)).to.deep.equal(['Landing Page A']);
    // The same tool in another letter case, concurrently, and through a lead: still one.
    const leads = salesRoutes(call, 'leads', () => t);
    await Promise.all([
      deals.created({ marketing: { svc_conversion_tool: 'landing page a' } }),
      deals.created({ marketing: { svc_conversion_tool: 'LANDING PAGE A' } }),
      leads.created({ marketing: { svc_conversion_tool: 'Landing page A' } }),
    ]);
    expect(await tools(t)).to.deep.equal(['Landing Page A']);
    // A correction through PUT naming another tool makes that one; the other company has none.
    await deals.put(first.id, { title: 'Record', marketing: { svc_conversion_tool: 'Chat widget' } });
    expect(await tools(t)).to.deep.equal(['Landing Page A', 'Chat widget']);
    expect(await tools(other)).to.deep.equal([]);
  });

  describe('idempotency with relations (rule 5)', () => {
    it('a replay answers the first creation and writes no second set of relations', async () => {
      const key = `k-${randomUUID()}`;
      const first = await deals.created({ title: 'Once', tags: [ref.hot.id], persons_id: [ref.ana.id], note: { content: 'n' } }, { key });
      const before = await written();
      expect(await deals.created({ title: 'Once', tags: [ref.cold.id] }, { key })).to.deep.equal(first);
      expect(await written()).to.deep.equal(before);
      expect((await deals.detail(first.id)).tags.map((x: any) => x.id)).to.deep.equal([ref.hot.id]);
    });
    it('an unknown follower consumes the key without writing the deal: 409 from then on', async () => {
      const key = `ff-${randomUUID()}`;
      const code = (await lastCode()) + 1;
      expect400(
        await deals.create({ title: 'After', followers: [{ user_id: randomUUID() }], note: { content: 'n' } }, { key }),
        'followers',
      );
      expect(await rows('select title from crm.deals where company_id = $1 and code = $2', [t.company.id, code])).to.deep.equal([]);
      for (let i = 0; i < 2; i++) {
        const again = await deals.create({ title: 'After' }, { key });
        expect(again.status, again.text).to.equal(409);
        expect(again.body.message).to.contain('failed');
      }
    });
    it('an unknown reference consumes the key too', async () => {
      const key = `ur-${randomUUID()}`;
      expect400(await deals.create({ title: 'x', persons_id: [randomUUID()] }, { key }), 'persons_id[0]');
      expect((await deals.create({ title: 'x' }, { key })).status).to.equal(409);
    });
    it('20 concurrent requests with one key create one deal with one set of tags', async () => {
      const key = `race-${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 20 }, () => deals.create({ title: 'Raced', tags: [ref.hot.id] }, { key })));
      expect(
        results.every((r) => r.status === 201 || r.status === 409),
        results.map((r) => r.status).join(),
      ).to.equal(true);
      const ids = new Set(results.filter((r) => r.status === 201).map((r) => r.body.id));
      expect(ids.size).to.equal(1);
      const [id] = [...ids];
      expect(await rows('select id from crm.deals where company_id = $1 and title = $2', [t.company.id, 'Raced'])).to.have.length(1);
      expect(await rows('select tag_id from crm.deal_tags where deal_id = $1', [id])).to.have.length(1);
    });
  });

  it('deal.created carries the snapshot (equal to the detail) and custom_fields_changed; body tags fire no tag event', async () => {
    const deal = await deals.created({
      title: 'Evented',
      tags: [ref.hot.id],
      persons_id: [ref.ana.id],
      organization: { name: 'Evented Org' },
      custom_fields: [{ id: ref.size.id, value: '12' }],
      value: 50,
    });
    const payload = await deliveredPayload(receiver, 'deal', deal.id, 'deal.created');
    expect(payload).to.have.all.keys('deal', 'custom_fields_changed');
    expectSizeSetTo12(payload, ref);
    const { pipeline_stages: _p, stage_durations: _s, associations_count: _a, ...detail } = await deals.detail(deal.id);
    expect(payload.deal).to.deep.equal(detail);
    expect(payload.deal.tags.map((x: any) => x.id)).to.deep.equal([ref.hot.id]);
    expect(await outboxOf(deal.id)).to.deep.equal(['deal.created']);
    const plain = await deals.created({ title: 'No answers' });
    expect(await deliveredPayload(receiver, 'deal', plain.id, 'deal.created')).to.have.all.keys('deal');
    expect(deliveriesOf(receiver, 'deal', deal.id, 'deal.tag_added')).to.deep.equal([]);
  });
});
