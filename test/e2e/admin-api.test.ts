import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { expect400 } from '../support/sales.js';
import { type Stack, startStack } from '../support/stack.js';

describe('management API (/admin/v1): tenancy, access and reference data', () => {
  let stack: Stack;
  let admin: ReturnType<typeof adminOf>;
  let call: ReturnType<typeof client>['call'];
  let t: Tenant;
  let other: Tenant;

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    t = await seedTenant(call, stack.adminToken);
    other = await seedTenant(call, stack.adminToken);
  });
  after(() => stack?.stop());

  describe('auth', () => {
    it('refuses a missing or wrong admin token with 401', async () => {
      expect((await call('POST', '/admin/v1/companies', { body: {} })).status).to.equal(401);
      expect((await call('POST', '/admin/v1/companies', { token: 'wrong-token-wrong-token', body: {} })).status).to.equal(401);
    });
    it('answers an unknown admin path with 404', async () => {
      expect((await admin('GET', '/nothing')).status).to.equal(404);
    });
  });

  describe('companies', () => {
    it('creates a company with its master user and the documented shape', async () => {
      const res = await admin('POST', '/companies', {
        name: 'Shape',
        plan_valid_until: '2030-01-01T00:00:00Z',
        master_user: { name: 'M', email: 'shape@example.test' },
      });
      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys('id', 'name', 'plan_valid_until', 'master_user');
      expect(res.body.plan_valid_until).to.equal('2030-01-01T00:00:00.000Z');
      expect(res.body.master_user).to.have.all.keys('id', 'name', 'email');
    });
    it('updates name and plan, null meaning no end', async () => {
      const res = await admin('PATCH', `/companies/${t.company.id}`, { name: 'Renamed', plan_valid_until: null });
      expect(res.body).to.include({ name: 'Renamed', plan_valid_until: null });
    });
    it('names the field of every invalid body', async () => {
      expect400(await admin('POST', '/companies', { master_user: { name: 'M', email: 'm@example.test' } }), 'name');
      expect400(await admin('POST', '/companies', { name: 'x', master_user: { name: 'M', email: 'not-an-email' } }), 'master_user.email');
      expect400(await admin('POST', '/companies', { name: 'x' }), 'master_user');
      expect400(
        await admin('POST', '/companies', { name: 'x', plan_valid_until: 'tomorrow', master_user: { name: 'M', email: 'm@e.test' } }),
        'plan_valid_until',
      );
      expect400(await admin('POST', '/companies', { name: 'x', extra: 1, master_user: { name: 'M', email: 'm@e.test' } }), 'extra');
      expect400(await admin('PATCH', `/companies/${t.company.id}`, { name: '' }), 'name');
    });
    it('answers an unknown or malformed company id with 404', async () => {
      expect((await admin('PATCH', `/companies/${randomUUID()}`, { name: 'x' })).status).to.equal(404);
      expect((await admin('POST', `/companies/not-a-uuid/users`, { name: 'x', email: 'x@e.test' })).status).to.equal(404);
      expect((await admin('POST', `/companies/${randomUUID()}/tags`, { name: 'x' })).status).to.equal(404);
      expect((await admin('POST', `/companies/${randomUUID()}/task-types`, { name: 'x' })).status).to.equal(404);
      expect(
        (await admin('POST', `/companies/${randomUUID()}/webhooks`, { url: 'http://127.0.0.1/x', events: ['lead.created'] })).status,
      ).to.equal(404);
    });
  });

  describe('users', () => {
    it('creates, updates and refuses a duplicate e-mail with 409 leaving the first user unchanged', async () => {
      const u = await admin('POST', `/companies/${t.company.id}/users`, { name: 'Ann', email: 'ann@example.test' });
      expect(u.status).to.equal(201);
      expect(u.body).to.include({ name: 'Ann', email: 'ann@example.test', active: true, archived: false });
      const dup = await admin('POST', `/companies/${t.company.id}/users`, { name: 'Other Ann', email: 'ann@example.test' });
      expect(dup.status).to.equal(409);
      const upd = await admin('PATCH', `/companies/${t.company.id}/users/${u.body.id}`, { archived: true });
      expect(upd.body).to.include({ name: 'Ann', archived: true, active: true });
      expect400(await admin('PATCH', `/companies/${t.company.id}/users/${u.body.id}`, { active: 'yes' }), 'active');
    });
    it("does not reach another company's user through this company's path", async () => {
      expect((await admin('PATCH', `/companies/${t.company.id}/users/${other.user.id}`, { name: 'x' })).status).to.equal(404);
    });
  });

  describe('keys', () => {
    it('shows the plain svc_ key once; later answers never carry it', async () => {
      const res = await admin('POST', `/companies/${t.company.id}/keys`, {
        created_by_user_id: t.user.id,
        permissions: ['crm/lead.read', 'crm/lead.create'],
        allowed_domain: 'App.Example.com',
        rate_limit_per_minute: 100,
      });
      expect(res.status).to.equal(201);
      expect(res.body.key).to.match(/^svc_[A-Za-z0-9_-]{40,}$/);
      expect(res.body).to.include({ allowed_domain: 'app.example.com', active: true, valid_from: null, valid_until: null });
      const patched = await admin('PATCH', `/companies/${t.company.id}/keys/${res.body.id}`, { permissions: ['*'] });
      expect(patched.body).to.not.have.property('key');
      expect(patched.body.permissions).to.deep.equal(['*']);
    });
    it('names the field of every invalid key body', async () => {
      const path = `/companies/${t.company.id}/keys`;
      expect400(await admin('POST', path, { permissions: ['*'] }), 'created_by_user_id');
      expect400(await admin('POST', path, { created_by_user_id: other.user.id, permissions: ['*'] }), 'created_by_user_id');
      expect400(await admin('POST', path, { created_by_user_id: t.user.id, permissions: [] }), 'permissions');
      expect400(await admin('POST', path, { created_by_user_id: t.user.id, permissions: ['lead read'] }), 'permissions.0');
      expect400(
        await admin('POST', path, { created_by_user_id: t.user.id, permissions: ['*'], allowed_domain: 'https://x.test/' }),
        'allowed_domain',
      );
      expect400(
        await admin('POST', path, {
          created_by_user_id: t.user.id,
          permissions: ['*'],
          valid_from: '2030-01-02T00:00:00Z',
          valid_until: '2030-01-01T00:00:00Z',
        }),
        'valid_until',
      );
      expect400(
        await admin('POST', path, { created_by_user_id: t.user.id, permissions: ['*'], rate_limit_per_minute: 0 }),
        'rate_limit_per_minute',
      );
    });
    it("deletes a key once; another company's key is a 404", async () => {
      const k = (await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['*'] })).body;
      expect((await admin('DELETE', `/companies/${other.company.id}/keys/${k.id}`)).status).to.equal(404);
      expect((await admin('DELETE', `/companies/${t.company.id}/keys/${k.id}`)).body).to.deep.equal({ id: k.id });
      expect((await admin('DELETE', `/companies/${t.company.id}/keys/${k.id}`)).status).to.equal(404);
      expect((await admin('PATCH', `/companies/${t.company.id}/keys/${k.id}`, { active: true })).status).to.equal(404);
    });
  });

  describe('reference data', () => {
    it('makes the first pipeline primary, and a new primary one demotes it', async () => {
      const fresh = (await admin('POST', '/companies', { name: 'P', master_user: { name: 'M', email: `p-${Date.now()}@e.test` } })).body;
      const first = (await admin('POST', `/companies/${fresh.id}/pipelines`, { name: 'One', stages: [{ name: 'A' }] })).body;
      expect(first.is_primary).to.equal(true);
      expect(first.stages).to.deep.equal([{ id: first.stages[0].id, name: 'A', position: 1 }]);
      const second = (
        await admin('POST', `/companies/${fresh.id}/pipelines`, { name: 'Two', is_primary: true, stages: [{ name: 'B' }, { name: 'C' }] })
      ).body;
      expect(second.is_primary).to.equal(true);
      const key = (await admin('POST', `/companies/${fresh.id}/keys`, { created_by_user_id: fresh.master_user.id, permissions: ['*'] }))
        .body;
      const lead = (await call('POST', '/integrations/external/leads', { token: key.key, body: { title: 'Goes to Two' } })).body;
      const got = (await call('GET', `/integrations/external/leads/${lead.id}`, { token: key.key })).body;
      expect(got.stage.id).to.equal(second.stages[0].id);
      expect400(await admin('POST', `/companies/${fresh.id}/pipelines`, { name: 'Empty', stages: [] }), 'stages');
    });
    it('creates tags, lead sources, trackers, reasons, roles, persons and organizations', async () => {
      const cid = t.company.id;
      const tag = await admin('POST', `/companies/${cid}/tags`, { name: 'VIP', color: { background: '#000', foreground: '#fff' } });
      expect(tag.body).to.deep.include({ name: 'VIP', color: { background: '#000', foreground: '#fff' } });
      const source = await admin('POST', `/companies/${cid}/lead-sources`, { name: 'Ads' });
      expect(source.body).to.include({ name: 'Ads', logo: null });
      const tracker = await admin('POST', `/companies/${cid}/trackers`, { code: 'summer', lead_source_id: source.body.id });
      expect(tracker.body).to.include({ code: 'summer', lead_source_id: source.body.id, active: true });
      expect((await admin('POST', `/companies/${cid}/trackers`, { code: 'summer', lead_source_id: source.body.id })).status).to.equal(409);
      for (const path of ['loss-reasons', 'gain-reasons', 'follower-roles']) {
        const res = await admin('POST', `/companies/${cid}/${path}`, { name: `A ${path}` });
        expect(res.status, path).to.equal(201);
        expect(res.body).to.have.all.keys('id', 'name');
      }
      const person = await admin('POST', `/companies/${cid}/persons`, {
        name: 'Paula',
        gender: 1,
        contacts: [
          { type: 1, value: 'paula@example.test' },
          { type: 2, value: '+5511999990000' },
          { type: 2, value: '+5511999990001' },
        ],
      });
      expect(person.status).to.equal(201);
      expect(person.body.contacts.map((c: { primary: boolean }) => c.primary)).to.deep.equal([true, true, false]);
      for (const c of person.body.contacts) expect(c.id).to.be.a('string');
      const org = await admin('POST', `/companies/${cid}/organizations`, { name: 'Org', legal_name: 'Org Ltda', document: '123' });
      expect(org.body).to.include({ name: 'Org', legal_name: 'Org Ltda', document: '123', site: null });
    });
    it('creates custom fields with integer field types and option ids', async () => {
      const res = await admin('POST', `/companies/${t.company.id}/custom-fields`, {
        entity: 'lead',
        name: 'Size',
        type: 'select',
        required: true,
        options: ['S', 'M'],
      });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ entity: 'lead', name: 'Size', type: 'select', field_type: 4, required: true });
      expect(res.body.options.map((o: { value: string }) => o.value)).to.deep.equal(['S', 'M']);
      expect(
        (await admin('POST', `/companies/${t.company.id}/custom-fields`, { entity: 'deal', name: 'Doc', type: 'file' })).body.field_type,
      ).to.equal(6);
    });
    it('creates task types and task stages in the tasks service', async () => {
      const type = await admin('POST', `/companies/${t.company.id}/task-types`, {
        name: 'Meeting',
        is_meeting: true,
        default_duration_minutes: 30,
      });
      expect(type.status).to.equal(201);
      expect(type.body).to.deep.equal({ id: type.body.id, name: 'Meeting', icon: null, is_meeting: true, default_duration_minutes: 30 });
      const s1 = await admin('POST', `/companies/${t.company.id}/task-stages`, { name: 'To do' });
      const s2 = await admin('POST', `/companies/${t.company.id}/task-stages`, { name: 'Done', is_completion: true, color: '#0a0' });
      expect(s1.body).to.include({ name: 'To do', position: 1, is_completion: false, active: true });
      expect(s2.body).to.include({ name: 'Done', position: 2, is_completion: true, color: '#0a0' });
      expect400(
        await admin('POST', `/companies/${t.company.id}/task-types`, { name: 'x', default_duration_minutes: 0 }),
        'default_duration_minutes',
      );
      expect400(await admin('POST', `/companies/${t.company.id}/task-stages`, { name: '' }), 'name');
    });
    it('names the field of invalid reference bodies', async () => {
      const cid = t.company.id;
      expect400(await admin('POST', `/companies/${cid}/tags`, { name: 'x'.repeat(101) }), 'name');
      expect400(await admin('POST', `/companies/${cid}/custom-fields`, { entity: 'lead', name: 'x', type: 'select' }), 'options');
      expect400(
        await admin('POST', `/companies/${cid}/custom-fields`, { entity: 'lead', name: 'x', type: 'text', options: ['a'] }),
        'options',
      );
      expect400(await admin('POST', `/companies/${cid}/custom-fields`, { entity: 'task', name: 'x', type: 'text' }), 'entity');
      expect400(await admin('POST', `/companies/${cid}/custom-fields`, { entity: 'lead', name: 'x', type: 'color' }), 'type');
      expect400(await admin('POST', `/companies/${cid}/trackers`, { code: 'x', lead_source_id: randomUUID() }), 'lead_source_id');
      expect400(await admin('POST', `/companies/${cid}/trackers`, { code: 'x', lead_source_id: other.company.id }), 'lead_source_id');
      expect400(
        await admin('POST', `/companies/${cid}/persons`, { name: 'x', contacts: [{ type: 1, value: 'not-mail' }] }),
        'contacts.0.value',
      );
      expect400(await admin('POST', `/companies/${cid}/persons`, { name: 'x', contacts: [{ type: 9, value: 'v' }] }), 'contacts.0.type');
      expect400(await admin('POST', `/companies/${cid}/organizations`, { legal_name: 'x' }), 'name');
      expect400(await admin('POST', `/companies/${cid}/loss-reasons`, {}), 'name');
    });
  });

  describe('webhook subscriptions', () => {
    const path = () => `/companies/${t.company.id}/webhooks`;
    it('creates with a generated secret and documented defaults, updates and deletes', async () => {
      const res = await admin('POST', path(), { url: 'https://hooks.example.test/in', events: ['lead.created', 'lead.updated'] });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ url: 'https://hooks.example.test/in', max_retries: 35, active: true });
      expect(res.body.secret).to.match(/^[0-9a-f]{64}$/);
      const upd = await admin('PATCH', `${path()}/${res.body.id}`, {
        events: ['deal.won'],
        max_retries: 2,
        headers: { 'X-Tenant': 'a' },
        auth: { type: 'bearer', token: 't0ken' },
      });
      expect(upd.status, upd.text).to.equal(200);
      expect(upd.body).to.deep.include({ events: ['deal.won'], max_retries: 2, headers: { 'X-Tenant': 'a' }, secret: res.body.secret });
      expect(upd.body.auth).to.deep.equal({ type: 'bearer', token: '[redacted]' });
      expect((await admin('DELETE', `/companies/${other.company.id}/webhooks/${res.body.id}`)).status).to.equal(404);
      expect((await admin('DELETE', `${path()}/${res.body.id}`)).body).to.deep.equal({ id: res.body.id });
      expect((await admin('PATCH', `${path()}/${res.body.id}`, { active: true })).status).to.equal(404);
    });
    it('names the field of invalid subscription bodies', async () => {
      expect400(await admin('POST', path(), { url: 'https://x.test/', events: ['proposal.created'] }), 'events.0');
      expect400(await admin('POST', path(), { url: 'https://x.test/', events: [] }), 'events');
      expect400(await admin('POST', path(), { url: 'ftp://x.test/', events: ['lead.created'] }), 'url');
      expect400(await admin('POST', path(), { events: ['lead.created'] }), 'url');
      expect400(await admin('POST', path(), { url: 'https://x.test/', events: ['lead.created'], secret: 'short' }), 'secret');
      expect400(await admin('POST', path(), { url: 'https://x.test/', events: ['lead.created'], max_retries: 101 }), 'max_retries');
      expect400(
        await admin('POST', path(), { url: 'https://x.test/', events: ['lead.created'], headers: { 'Bad Header': 'v' } }),
        'headers',
      );
      expect400(await admin('POST', path(), { url: 'https://x.test/', events: ['lead.created'], headers: { Host: 'v' } }), 'headers');
      expect400(await admin('POST', path(), { url: 'https://x.test/', events: ['lead.created'], auth: { type: 'digest' } }), 'auth');
    });
  });
});
