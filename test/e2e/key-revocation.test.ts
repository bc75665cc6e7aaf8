import { expect } from 'chai';
import { type CallResult, client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Child, loggedPort, spawnEntry } from '../support/processes.js';
import { type Stack, startStack } from '../support/stack.js';

type Call = ReturnType<typeof client>['call'];

/**
 * The management contract: a deleted key "stops working at once". Two gateway processes in front of one crm, with
 * the longest key cache allowed (1 s): the request right after the admin call, on the gateway that served it and on
 * the other one, is refused. Without the revocation broadcast both answered 200 from their caches (decision 0120).
 */
describe('key revocation at once on every gateway process (two gateways, one crm)', () => {
  let stack: Stack;
  let gateways: Child[] = [];
  let a: Call;
  let b: Call;
  let t: Tenant;
  let leadId: string;

  const startGatewayProcess = async () => {
    const child = spawnEntry('gateway/src/main.ts', { ...stack.gatewayEnv, PORT: '0', LOG_LEVEL: 'info', KEY_CACHE_TTL_MS: '1000' });
    gateways.push(child);
    return client(`http://127.0.0.1:${await loggedPort(child)}`).call;
  };
  const getLead = (call: Call, key: string) => call('GET', `/integrations/external/leads/${leadId}`, { token: key });
  const newKey = async () => {
    const res = await adminOf(a, stack.adminToken)('POST', `/companies/${t.company.id}/keys`, {
      created_by_user_id: t.user.id,
      permissions: ['*'],
    });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; key: string };
  };
  /** Both gateways have the key cached as working. */
  const warm = async (key: string) => {
    expect((await getLead(a, key)).status).to.equal(200);
    expect((await getLead(b, key)).status).to.equal(200);
  };
  const refused = (res: CallResult, message: RegExp) => {
    expect(res.status, res.text).to.equal(401);
    expect(res.body.message).to.match(message);
  };

  before(async () => {
    stack = await startStack();
    [a, b] = await Promise.all([startGatewayProcess(), startGatewayProcess()]);
    t = await seedTenant(a, stack.adminToken);
    const lead = await a('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Revocation target', visibility: 1 } });
    expect(lead.status, lead.text).to.equal(201);
    leadId = lead.body.id;
  });
  after(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    gateways = [];
    await stack?.stop();
  });

  it('a deleted key is refused on the very next request by both gateways', async () => {
    const key = await newKey();
    await warm(key.key);
    const del = await adminOf(a, stack.adminToken)('DELETE', `/companies/${t.company.id}/keys/${key.id}`);
    expect(del.body).to.deep.equal({ id: key.id });
    refused(await getLead(a, key.key), /deleted/);
    refused(await getLead(b, key.key), /deleted/);
  });

  it('a deactivated key is refused at once, whichever gateway served the admin call, and works again when reactivated', async () => {
    const key = await newKey();
    await warm(key.key);
    expect((await adminOf(b, stack.adminToken)('PATCH', `/companies/${t.company.id}/keys/${key.id}`, { active: false })).status).to.equal(
      200,
    );
    refused(await getLead(a, key.key), /inactive/);
    refused(await getLead(b, key.key), /inactive/);
    expect((await adminOf(a, stack.adminToken)('PATCH', `/companies/${t.company.id}/keys/${key.id}`, { active: true })).status).to.equal(
      200,
    );
    expect((await getLead(a, key.key)).status).to.equal(200);
    expect((await getLead(b, key.key)).status).to.equal(200);
  });

  it('a key given a valid_until in the past is refused at once as expired', async () => {
    const key = await newKey();
    await warm(key.key);
    const patch = await adminOf(a, stack.adminToken)('PATCH', `/companies/${t.company.id}/keys/${key.id}`, {
      valid_until: new Date(Date.now() - 1000).toISOString(),
    });
    expect(patch.status, patch.text).to.equal(200);
    refused(await getLead(a, key.key), /expired/);
    refused(await getLead(b, key.key), /expired/);
  });

  it("a key whose creator was deactivated is refused at once, and a narrowed key's permissions apply at once", async () => {
    const key = await newKey();
    await warm(key.key);
    const narrowed = await adminOf(a, stack.adminToken)('PATCH', `/companies/${t.company.id}/keys/${key.id}`, {
      permissions: ['crm/task.read'],
    });
    expect(narrowed.status, narrowed.text).to.equal(200);
    expect((await getLead(b, key.key)).status).to.equal(403);
    const user = await adminOf(b, stack.adminToken)('PATCH', `/companies/${t.company.id}/users/${t.user.id}`, { active: false });
    expect(user.status, user.text).to.equal(200);
    refused(await getLead(a, key.key), /creator/);
    refused(await getLead(b, key.key), /creator/);
    await adminOf(a, stack.adminToken)('PATCH', `/companies/${t.company.id}/users/${t.user.id}`, { active: true });
  });

  it('a refused admin change (another company) leaves the key working', async () => {
    const key = await newKey();
    await warm(key.key);
    const other = await seedTenant(a, stack.adminToken);
    const wrong = await adminOf(a, stack.adminToken)('DELETE', `/companies/${other.company.id}/keys/${key.id}`);
    expect(wrong.status).to.equal(404);
    expect(wrong.body).to.have.all.keys('statusCode', 'message', 'error');
    expect((await getLead(a, key.key)).status).to.equal(200);
    expect((await getLead(b, key.key)).status).to.equal(200);
  });
});
