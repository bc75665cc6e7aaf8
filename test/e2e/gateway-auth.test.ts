import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { SignJWT } from 'jose';
import { type CallResult, client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

const expectSpecError = (res: CallResult, status: number) => {
  expect(res.status, res.text).to.equal(status);
  expect(res.body).to.have.all.keys('statusCode', 'message', 'error');
  expect(res.body.statusCode).to.equal(status);
  expect(res.body.message).to.be.a('string').and.not.empty;
  expect(res.body.error).to.be.a('string').and.not.empty;
};

describe('gateway authentication (spec Authentication rules 1 to 4)', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let t: Tenant;
  let leadId: string;

  const getLead = (token: string | undefined, headers: Record<string, string> = {}) =>
    call('GET', `/integrations/external/leads/${leadId}`, { token, headers });
  const newKey = async (body: Record<string, unknown> = {}) => {
    const res = await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: t.user.id, permissions: ['*'], ...body });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    t = await seedTenant(call, stack.adminToken);
    const lead = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Auth target', visibility: 1 } });
    expect(lead.status, lead.text).to.equal(201);
    leadId = lead.body.id;
  });
  after(() => stack?.stop());

  describe('rule 1: Authorization: Bearer with an svc_ integration key', () => {
    it('accepts a valid key', async () => {
      expect((await getLead(t.key.key)).status).to.equal(200);
    });
    it('rejects a request without Authorization with 401 and the spec error body', async () => {
      expectSpecError(await getLead(undefined), 401);
    });
    it('rejects another scheme than Bearer', async () => {
      expectSpecError(
        await call('GET', `/integrations/external/leads/${leadId}`, { headers: { authorization: `Basic ${t.key.key}` } }),
        401,
      );
    });
    it('rejects a key without the svc_ prefix', async () => {
      expectSpecError(await getLead(t.key.key.replace(/^svc_/, 'abc_')), 401);
    });
    it('rejects an unknown svc_ key', async () => {
      expectSpecError(await getLead(`svc_${'x'.repeat(43)}`), 401);
    });
    it('rejects a JWT in place of a key (the key is not a JWT)', async () => {
      const jwt = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(32)));
      expectSpecError(await getLead(jwt), 401);
    });
    it('never accepts the admin token on the external API', async () => {
      expectSpecError(await getLead(stack.adminToken), 401);
    });
    it('never accepts an integration key on the admin API', async () => {
      expectSpecError(await call('POST', '/admin/v1/companies', { token: t.key.key, body: { name: 'x' } }), 401);
    });
  });

  describe('rule 2: active, not deleted, inside its validity period', () => {
    it('a deleted key stops working within a second', async () => {
      const key = await newKey();
      expect((await getLead(key.key)).status).to.equal(200);
      expect((await admin('DELETE', `/companies/${t.company.id}/keys/${key.id}`)).body).to.deep.equal({ id: key.id });
      const started = Date.now();
      const res = await eventually(
        async () => {
          const r = await getLead(key.key);
          return r.status === 401 ? r : undefined;
        },
        3000,
        25,
      );
      expectSpecError(res, 401);
      expect(Date.now() - started).to.be.below(1500);
    });
    it('an inactive key is refused, and works again when reactivated', async () => {
      const key = await newKey();
      await admin('PATCH', `/companies/${t.company.id}/keys/${key.id}`, { active: false });
      expectSpecError(await eventually(async () => ((r) => (r.status === 401 ? r : undefined))(await getLead(key.key)), 3000, 25), 401);
      await admin('PATCH', `/companies/${t.company.id}/keys/${key.id}`, { active: true });
      await eventually(async () => (await getLead(key.key)).status === 200, 3000, 25);
    });
    it('a key whose valid_from is in the future is refused', async () => {
      const key = await newKey({ valid_from: new Date(Date.now() + 3_600_000).toISOString() });
      expectSpecError(await getLead(key.key), 401);
    });
    it('a key whose valid_until has passed is refused', async () => {
      const key = await newKey({ valid_until: new Date(Date.now() - 1000).toISOString() });
      expectSpecError(await getLead(key.key), 401);
    });
    it('a key inside its window works', async () => {
      const key = await newKey({
        valid_from: new Date(Date.now() - 60_000).toISOString(),
        valid_until: new Date(Date.now() + 60_000).toISOString(),
      });
      expect((await getLead(key.key)).status).to.equal(200);
    });
  });

  describe('rule 3: allowed_domain against the Origin host, else the Referer host', () => {
    let key: { key: string };
    before(async () => {
      key = await newKey({ allowed_domain: 'app.example.com' });
    });
    it('accepts a matching Origin', async () => {
      expect((await getLead(key.key, { origin: 'https://app.example.com' })).status).to.equal(200);
    });
    it('compares host names without case, port or path', async () => {
      expect((await getLead(key.key, { origin: 'https://APP.Example.com:8443' })).status).to.equal(200);
    });
    it('refuses another Origin host, including a subdomain or a suffix trick', async () => {
      for (const origin of ['https://evil.test', 'https://x.app.example.com', 'https://app.example.com.evil.test']) {
        expectSpecError(await getLead(key.key, { origin }), 401);
      }
    });
    it('uses the Referer host when there is no Origin', async () => {
      expect((await getLead(key.key, { referer: 'https://app.example.com/page?x=1' })).status).to.equal(200);
      expectSpecError(await getLead(key.key, { referer: 'https://evil.test/page' }), 401);
    });
    it('lets Origin win over a matching Referer', async () => {
      expectSpecError(await getLead(key.key, { origin: 'https://evil.test', referer: 'https://app.example.com/' }), 401);
    });
    it('accepts only what a browser sends: http(s), host, optional port; no other scheme, path, whitespace or %2e', async () => {
      for (const origin of [
        'ftp://app.example.com',
        'https://app.example.com/path',
        'https://app%2eexample.com',
        'https://app.example.com%2e',
        'https://user@app.example.com',
      ]) {
        expectSpecError(await getLead(key.key, { origin }), 401);
      }
      expectSpecError(await getLead(key.key, { referer: 'ftp://app.example.com/x' }), 401);
      expectSpecError(await getLead(key.key, { referer: 'https://app%2eexample.com/x' }), 401);
    });
    it('refuses a request with neither header, or a malformed one', async () => {
      expectSpecError(await getLead(key.key), 401);
      expectSpecError(await getLead(key.key, { origin: 'not a url' }), 401);
    });
  });

  describe('rule 4: company and permissions from the key; the creator must be an active user', () => {
    it('refuses a key whose creator was deactivated, and accepts it again after reactivation', async () => {
      const u = (await admin('POST', `/companies/${t.company.id}/users`, { name: 'Temp', email: `temp-${Date.now()}@example.test` })).body;
      const key = (await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: u.id, permissions: ['*'] })).body;
      expect((await getLead(key.key)).status).to.equal(200);
      await admin('PATCH', `/companies/${t.company.id}/users/${u.id}`, { active: false });
      expectSpecError(await eventually(async () => ((r) => (r.status === 401 ? r : undefined))(await getLead(key.key)), 3000, 25), 401);
      await admin('PATCH', `/companies/${t.company.id}/users/${u.id}`, { active: true });
      await eventually(async () => (await getLead(key.key)).status === 200, 3000, 25);
    });
    it('refuses a key whose creator was archived', async () => {
      const u = (await admin('POST', `/companies/${t.company.id}/users`, { name: 'Arch', email: `arch-${Date.now()}@example.test` })).body;
      const key = (await admin('POST', `/companies/${t.company.id}/keys`, { created_by_user_id: u.id, permissions: ['*'] })).body;
      await admin('PATCH', `/companies/${t.company.id}/users/${u.id}`, { archived: true });
      expectSpecError(await getLead(key.key), 401);
    });
    it('answers 403 when the key lacks the permission, and allows what it grants', async () => {
      const readOnly = await newKey({ permissions: ['crm/lead.read'] });
      expect((await getLead(readOnly.key)).status).to.equal(200);
      expectSpecError(await call('POST', '/integrations/external/leads', { token: readOnly.key, body: { title: 'x' } }), 403);
    });
    it('forwards changed permissions within a second: a token signed for the old ones is not reused', async () => {
      const key = await newKey({ permissions: ['*'] });
      expect((await getLead(key.key)).status).to.equal(200); // signs a token carrying ["*"]
      const patched = await admin('PATCH', `/companies/${t.company.id}/keys/${key.id}`, { permissions: ['crm/task.read'] });
      expect(patched.status, patched.text).to.equal(200);
      const changedAt = Date.now();
      await eventually(async () => {
        expectSpecError(await getLead(key.key), 403);
        return true;
      }, 1500);
      expect(Date.now() - changedAt).to.be.below(1500);
      // ... and granted again when the permission comes back.
      await admin('PATCH', `/companies/${t.company.id}/keys/${key.id}`, { permissions: ['crm/lead.read'] });
      await eventually(async () => (await getLead(key.key)).status === 200 || undefined, 1500);
    });
    it('acts as the key creator: created_by and the default responsible are the creator', async () => {
      const res = await getLead(t.key.key);
      expect(res.body.created_by.id).to.equal(t.user.id);
      expect(res.body.responsible.id).to.equal(t.user.id);
    });
  });

  describe('identity between gateway and services', () => {
    it('overwrites an identity header sent by the client', async () => {
      const forged = await new SignJWT({ knd: 'admin' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('svc-gateway')
        .setAudience('svc-services')
        .setExpirationTime('1m')
        .sign(new TextEncoder().encode(stack.env.IDENTITY_TOKEN_SECRET!));
      const res = await call('POST', '/admin/v1/companies', {
        headers: { 'x-svc-identity': forged },
        body: { name: 'x', master_user: { name: 'a', email: 'a@b.test' } },
      });
      expectSpecError(res, 401);
    });
    it('a service called directly without an identity token answers 401', async () => {
      const direct = client(stack.services.crm.httpUrl).call;
      expectSpecError(await direct('GET', `/integrations/external/leads/${leadId}`), 401);
      expectSpecError(await direct('POST', '/admin/v1/companies', { body: { name: 'x' } }), 401);
    });
    it('a service refuses a token signed with another secret, or expired', async () => {
      const direct = client(stack.services.crm.httpUrl).call;
      const claims = { knd: 'integration', cid: t.company.id, kid: t.key.id, prm: ['*'] };
      const sign = (secret: string, exp: string | number) =>
        new SignJWT(claims)
          .setProtectedHeader({ alg: 'HS256' })
          .setIssuer('svc-gateway')
          .setAudience('svc-services')
          .setSubject(t.user.id)
          .setExpirationTime(exp)
          .sign(new TextEncoder().encode(secret));
      const wrongSecret = await sign('y'.repeat(40), '1m');
      expectSpecError(await direct('GET', `/integrations/external/leads/${leadId}`, { headers: { 'x-svc-identity': wrongSecret } }), 401);
      const expired = await sign(stack.env.IDENTITY_TOKEN_SECRET!, Math.floor(Date.now() / 1000) - 10);
      expectSpecError(await direct('GET', `/integrations/external/leads/${leadId}`, { headers: { 'x-svc-identity': expired } }), 401);
      const good = await sign(stack.env.IDENTITY_TOKEN_SECRET!, '1m');
      expect((await direct('GET', `/integrations/external/leads/${leadId}`, { headers: { 'x-svc-identity': good } })).status).to.equal(200);
    });
  });

  it('answers an unknown external resource with 404 after authenticating', async () => {
    expectSpecError(await call('GET', '/integrations/external/nope', { token: t.key.key }), 404);
    expectSpecError(await call('GET', '/integrations/external/nope'), 401);
  });
});
