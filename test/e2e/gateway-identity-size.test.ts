import { MAX_KEY_PERMISSIONS, MAX_PERMISSION_LENGTH } from '@svc/platform/identity';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { expectErrorBody } from '../support/errors.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

/** `n` distinct permission names of exactly MAX_PERMISSION_LENGTH characters. */
const longPermissions = (n: number) =>
  Array.from({ length: n }, (_, i) => {
    const head = `crm/p${i}.`;
    return head + 'x'.repeat(MAX_PERMISSION_LENGTH - head.length);
  });

/**
 * A key that can be created can be used (issue 23 item 3, decision 0153): what a key holds is bounded at creation,
 * its identity always fits the services' header limit beside the largest headers the gateway accepts, and every 431,
 * on the gateway or a service, carries the error body.
 */
describe('gateway: the identity of the largest key fits, and every 431 has the error body', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let t: Tenant;
  const keysPath = () => `/companies/${t.company.id}/keys`;
  const keyRows = async () => {
    const db = new pg.Client({ connectionString: stack.db.url });
    await db.connect();
    try {
      return (await db.query('select id, permissions from crm.integration_keys order by id')).rows;
    } finally {
      await db.end();
    }
  };

  before(async () => {
    stack = await startStack();
    call = client(stack.gatewayUrl).call;
    admin = adminOf(call, stack.adminToken);
    t = await seedTenant(call, stack.adminToken);
  });
  after(() => stack?.stop());

  it(`a key with ${MAX_KEY_PERMISSIONS} permissions of ${MAX_PERMISSION_LENGTH} characters works with near 16 KB of client headers`, async () => {
    const created = await admin('POST', keysPath(), {
      created_by_user_id: t.user.id,
      permissions: [...longPermissions(MAX_KEY_PERMISSIONS - 1), 'crm/lead.read'],
    });
    expect(created.status, created.text).to.equal(201);
    // Headers just under what the gateway accepts from a client, beside the identity it adds for the service.
    const pad = 'p'.repeat(15_000);
    const res = await fetch(`${stack.gatewayUrl}/integrations/external/leads`, {
      headers: { authorization: `Bearer ${created.body.key}`, 'x-pad': pad },
    });
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).to.equal(200);
    expect(JSON.parse(text)).to.have.property('records');
  });

  it(`refuses a key with more than ${MAX_KEY_PERMISSIONS} permissions, or a longer permission, with a 400 that says the limit; nothing written`, async () => {
    const before = await keyRows();
    const many = await admin('POST', keysPath(), { created_by_user_id: t.user.id, permissions: longPermissions(MAX_KEY_PERMISSIONS + 1) });
    expect(many.status, many.text).to.equal(400);
    expectErrorBody(many);
    expect(many.body.details.fields).to.deep.include({
      field: 'permissions',
      message: `must list at most ${MAX_KEY_PERMISSIONS} permissions`,
    });
    const long = await admin('POST', keysPath(), {
      created_by_user_id: t.user.id,
      permissions: [`crm/${'y'.repeat(MAX_PERMISSION_LENGTH)}`],
    });
    expect(long.status, long.text).to.equal(400);
    expect(long.body.details.fields).to.deep.include({
      field: 'permissions.0',
      message: `must be at most ${MAX_PERMISSION_LENGTH} characters`,
    });
    expect(await keyRows()).to.deep.equal(before);

    const patched = await admin('PATCH', `${keysPath()}/${t.key.id}`, { permissions: longPermissions(MAX_KEY_PERMISSIONS + 1) });
    expect(patched.status, patched.text).to.equal(400);
    expect(patched.body.details.fields.map((f: { field: string }) => f.field)).to.include('permissions');
    expect(await keyRows()).to.deep.equal(before);
  });

  it('answers 431 with the error body on the gateway and on a service', async () => {
    const huge = { authorization: `Bearer ${t.key.key}`, 'x-pad': 'p'.repeat(40_000) };
    for (const [where, url] of [
      ['gateway', `${stack.gatewayUrl}/integrations/external/leads`],
      ['crm', `${stack.services.crm.httpUrl}/integrations/external/leads`],
    ] as const) {
      const res = await fetch(url, { headers: huge });
      expect(res.status, where).to.equal(431);
      const body = (await res.json()) as { statusCode: number; message: string };
      expect(body, where).to.have.all.keys('statusCode', 'message', 'error');
      expect(body.statusCode, where).to.equal(431);
      expect(body.message, where).to.match(/^The request line and headers exceed \d+ KB$/);
    }
  });
});
