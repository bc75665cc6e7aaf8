import { type ApiClient, ApiError, createClient, isApiError } from '@svc/client';
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
    const created = await api.POST('/leads', {
      body: { title: 'Typed lead', visibility: 1 },
      params: { header: { 'x-idempotency-key': `typed-${Date.now()}` } },
    });
    expect(created.response.status).to.equal(201);
    const id = created.data!.id;
    const detail = await api.GET('/leads/{ref}', { params: { path: { ref: String(created.data!.code) } } });
    expect(detail.data).to.include({ id, title: 'Typed lead', visibility: 1 });
    expect(detail.data!.stage?.name).to.equal('New');
    const updated = await api.PUT('/leads/{ref}', { params: { path: { ref: id } }, body: { title: 'Typed lead 2' } });
    expect(updated.data).to.include({ id, title: 'Typed lead 2', status: 1 });
    const list = await api.GET('/leads', { params: { query: { take: 10 } } });
    expect(list.data!.records.map((r) => r.id)).to.include(id);
  });

  it('creates, reads, updates and lists a deal', async () => {
    const created = await api.POST('/deals', { body: { title: 'Typed deal', value: 1500, visibility: 1 } });
    expect(created.response.status).to.equal(201);
    const id = created.data!.id;
    const detail = await api.GET('/deals/{ref}', { params: { path: { ref: id } } });
    expect(detail.data).to.include({ id, title: 'Typed deal', value: 1500 });
    const updated = await api.PUT('/deals/{ref}', {
      params: { path: { ref: id } },
      body: { title: 'Typed deal 2', value: 2000 },
    });
    expect(updated.data).to.include({ id, title: 'Typed deal 2' });
    const list = await api.GET('/deals', { params: { query: { value_min: '1000' } } });
    expect(list.data!.records.map((r) => r.id)).to.include(id);
  });

  it('creates, reads, updates, lists and deletes a task', async () => {
    const created = await api.POST('/tasks', {
      body: { crm_task_type_id: t.types.call.id, title: 'Typed task', priority: 2 },
    });
    expect(created.response.status, JSON.stringify(created.error)).to.equal(201);
    const id = created.data!.id;
    expect(created.data!.crm_task_type).to.include({ id: t.types.call.id, name: 'Call' });
    const got = await api.GET('/tasks/{id}', { params: { path: { id } } });
    expect(got.data).to.include({ id, title: 'Typed task', priority: 2 });
    const updated = await api.PUT('/tasks/{id}', { params: { path: { id } }, body: { title: 'Typed task 2' } });
    expect(updated.data!.title).to.equal('Typed task 2');
    const list = await api.GET('/tasks', { params: { query: {} } });
    expect(list.data!.records.map((r) => r.id)).to.include(id);
    const deleted = await api.DELETE('/tasks/{id}', { params: { path: { id }, query: {} } });
    expect(deleted.data).to.deep.equal({ id, deleted_ids: [id] });
  });

  it('answers the spec’s error bodies as typed errors: 400 naming the field, 401, 403 and 404', async () => {
    const invalid = await api.POST('/leads', { body: { title: '' } });
    expect(invalid.response.status).to.equal(400);
    expect(invalid.error).to.be.instanceOf(ApiError);
    expect({ ...invalid.error }).to.deep.include({
      statusCode: 400,
      error: 'Bad Request',
      details: { fields: [{ field: 'title', message: 'must be 1 to 150 characters' }] },
      status: 400,
    });
    expect(invalid.error?.message).to.equal('title: must be 1 to 150 characters');
    expect(isApiError(invalid.error) && invalid.error.request_id)
      .to.equal(invalid.response.headers.get('x-request-id'))
      .and.match(/./);
    // The typed client knows the field list of a 400 (decision 0141).
    const refusal = invalid.error;
    const firstField: string | undefined = refusal && 'details' in refusal ? refusal.details?.fields[0]?.field : undefined;
    expect(firstField).to.equal('title');
    const noKey = await anonymous.GET('/tasks', { params: { query: {} } });
    expect(noKey.response.status).to.equal(401);
    const denied = await readOnly.POST('/leads', { body: { title: 'No' } });
    expect(denied.response.status).to.equal(403);
    expect(denied.error?.message).to.equal('The key lacks the permission crm/lead.create');
    const missing = await api.GET('/deals/{ref}', {
      params: { path: { ref: '00000000-0000-7000-8000-000000000000' } },
    });
    expect(missing.response.status).to.equal(404);
  });

  it('sends a GET, and a write with an idempotency key, again after a 429 as Retry-After says; a write without one once', async () => {
    const limited = await adminOf(client(stack.gatewayUrl).call, stack.adminToken)('POST', `/companies/${t.company.id}/keys`, {
      created_by_user_id: t.user.id,
      permissions: ['*'],
      rate_limit_per_minute: 1,
    });
    const sent: string[] = [];
    const counting = async (input: Request) => {
      sent.push(input.method);
      return checkedFetch(input);
    };
    const tight = createClient({ baseUrl: stack.gatewayUrl, key: limited.body.key, fetch: counting, retries: 2, maxRetryDelayMs: 20 });
    expect((await tight.GET('/leads', { params: { query: { take: 1 } } })).response.status).to.equal(200);
    sent.length = 0;
    const read = await tight.GET('/leads', { params: { query: { take: 1 } } });
    expect(read.response.status).to.equal(429);
    expect(sent).to.deep.equal(['GET', 'GET', 'GET']);
    expect(isApiError(read.error) && read.error.retry_after)
      .to.be.a('number')
      .above(0);
    sent.length = 0;
    const write = await tight.POST('/leads', { body: { title: 'Once' } });
    expect(write.response.status).to.equal(429);
    expect(sent).to.deep.equal(['POST']);
    sent.length = 0;
    await tight.POST('/leads', { body: { title: 'Keyed' }, params: { header: { 'x-idempotency-key': `retry-${Date.now()}` } } });
    expect(sent).to.deep.equal(['POST', 'POST', 'POST']);
  });
});
