import { type ApiClient, createClient } from '@svc/client';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { checkResponse } from '../support/contract.js';
import { adminOf } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';
import { seedTaskTenant, type TaskTenant } from '../support/tasks.js';

/**
 * The generated client (@svc/client, decision 0104) against the running stack: leads, deals and tasks through typed
 * calls, every answer also checked against the OpenAPI document like the e2e client's.
 */
describe('the typed client (@svc/client) on leads, deals and tasks', () => {
  let stack: Stack;
  let t: TaskTenant;
  let api: ApiClient;
  let anonymous: ApiClient;
  let readOnly: ApiClient;

  const checkedFetch = async (input: Request) => {
    const res = await fetch(input);
    const text = await res.clone().text();
    checkResponse(input.method, new URL(input.url).pathname + new URL(input.url).search, res.status, text, res.headers.get('content-type'));
    return res;
  };

  before(async () => {
    stack = await startStack();
    t = await seedTaskTenant(client(stack.gatewayUrl).call, stack.adminToken);
    api = createClient({ baseUrl: stack.gatewayUrl, key: t.key.key, fetch: checkedFetch });
    anonymous = createClient({ baseUrl: stack.gatewayUrl, fetch: checkedFetch });
    const key = await adminOf(client(stack.gatewayUrl).call, stack.adminToken)('POST', `/companies/${t.company.id}/keys`, {
      created_by_user_id: t.user.id,
      permissions: ['crm/lead.read'],
    });
    readOnly = createClient({ baseUrl: stack.gatewayUrl, key: key.body.key, fetch: checkedFetch });
  });
  after(() => stack?.stop());

  it('creates, reads, updates and lists a lead', async () => {
    const created = await api.POST('/integrations/external/leads', {
      body: { title: 'Typed lead', visibility: 1 },
      params: { header: { 'x-idempotency-key': `typed-${Date.now()}` } },
    });
    expect(created.response.status).to.equal(201);
    const id = created.data!.id;
    const detail = await api.GET('/integrations/external/leads/{ref}', { params: { path: { ref: String(created.data!.code) } } });
    expect(detail.data).to.include({ id, title: 'Typed lead', visibility: 1 });
    expect(detail.data!.stage?.name).to.equal('New');
    const updated = await api.PUT('/integrations/external/leads/{ref}', { params: { path: { ref: id } }, body: { title: 'Typed lead 2' } });
    expect(updated.data).to.include({ id, title: 'Typed lead 2', status: 1 });
    const list = await api.GET('/integrations/external/leads', { params: { query: { take: 10 } } });
    expect(list.data!.records.map((r) => r.id)).to.include(id);
  });

  it('creates, reads, updates and lists a deal', async () => {
    const created = await api.POST('/integrations/external/deals', { body: { title: 'Typed deal', value: 1500, visibility: 1 } });
    expect(created.response.status).to.equal(201);
    const id = created.data!.id;
    const detail = await api.GET('/integrations/external/deals/{ref}', { params: { path: { ref: id } } });
    expect(detail.data).to.include({ id, title: 'Typed deal', value: 1500 });
    const updated = await api.PUT('/integrations/external/deals/{ref}', {
      params: { path: { ref: id } },
      body: { title: 'Typed deal 2', value: 2000 },
    });
    expect(updated.data).to.include({ id, title: 'Typed deal 2' });
    const list = await api.GET('/integrations/external/deals', { params: { query: { value_min: '1000' } } });
    expect(list.data!.records.map((r) => r.id)).to.include(id);
  });

  it('creates, reads, updates, lists and deletes a task', async () => {
    const created = await api.POST('/integrations/external/tasks', {
      body: { crm_task_type_id: t.types.call.id, title: 'Typed task', priority: 2 },
    });
    expect(created.response.status, JSON.stringify(created.error)).to.equal(201);
    const id = created.data!.id;
    expect(created.data!.crm_task_type).to.include({ id: t.types.call.id, name: 'Call' });
    const got = await api.GET('/integrations/external/tasks/{id}', { params: { path: { id } } });
    expect(got.data).to.include({ id, title: 'Typed task', priority: 2 });
    const updated = await api.PUT('/integrations/external/tasks/{id}', { params: { path: { id } }, body: { title: 'Typed task 2' } });
    expect(updated.data!.title).to.equal('Typed task 2');
    const list = await api.GET('/integrations/external/tasks', { params: { query: {} } });
    expect(list.data!.records.map((r) => r.id)).to.include(id);
    const deleted = await api.DELETE('/integrations/external/tasks/{id}', { params: { path: { id }, query: {} } });
    expect(deleted.data).to.deep.equal({ id, deleted_ids: [id] });
  });

  it('answers the spec’s error bodies as typed errors: 400 naming the field, 401, 403 and 404', async () => {
    const invalid = await api.POST('/integrations/external/leads', { body: { title: '' } });
    expect(invalid.response.status).to.equal(400);
    expect(invalid.error).to.deep.equal({
      statusCode: 400,
      message: 'title: must be 1 to 150 characters',
      error: 'Bad Request',
      details: { fields: [{ field: 'title', message: 'must be 1 to 150 characters' }] },
    });
    // The typed client knows the field list of a 400 (decision 0141).
    const refusal = invalid.error;
    const firstField: string | undefined = refusal && 'details' in refusal ? refusal.details?.fields[0]?.field : undefined;
    expect(firstField).to.equal('title');
    const noKey = await anonymous.GET('/integrations/external/tasks', { params: { query: {} } });
    expect(noKey.response.status).to.equal(401);
    const denied = await readOnly.POST('/integrations/external/leads', { body: { title: 'No' } });
    expect(denied.response.status).to.equal(403);
    expect(denied.error?.message).to.equal('The key lacks the permission crm/lead.create');
    const missing = await api.GET('/integrations/external/deals/{ref}', {
      params: { path: { ref: '00000000-0000-7000-8000-000000000000' } },
    });
    expect(missing.response.status).to.equal(404);
  });
});
