import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type pg from 'pg';
import type { CallResult } from '../support/client.js';
import { openStack } from '../support/session.js';
import type { Stack } from '../support/stack.js';
import { seedTaskTenant, type TaskTenant } from '../support/tasks.js';

const TEXT_RULE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/**
 * What text and bodies every service accepts (decision 0110), through the gateway: every service answers the
 * same statuses and messages, and nothing is written for a refused request.
 */
describe('request rules in every service: text, media types, encodings, sizes, queries (through the gateway)', () => {
  let stack: Stack;
  let db: pg.Client;
  let call: Awaited<ReturnType<typeof openStack>>['call'];
  let a: TaskTenant;
  let lead: { id: string };
  let deal: { id: string };
  let task: { id: string };

  /** A raw request: `body` is sent as given (a JSON text with \u escapes, or bytes). */
  const raw = async (method: string, path: string, token: string, body?: string | Buffer, headers: Record<string, string> = {}) => {
    const res = await fetch(`${stack.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...headers },
      body: body === undefined ? undefined : new Uint8Array(typeof body === 'string' ? Buffer.from(body) : body),
    });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : undefined } as CallResult;
  };
  const json = { 'content-type': 'application/json' };
  const ext = (method: string, path: string, body?: string | Buffer, headers: Record<string, string> = json) =>
    raw(method, `/integrations/external${path}`, a.key.key, body, headers);
  const adm = (method: string, path: string, body?: string | Buffer, headers: Record<string, string> = json) =>
    raw(method, `/admin/v1/companies/${a.company.id}${path}`, stack.adminToken, body, headers);
  const count = async (table: string) =>
    Number((await db.query(`select count(*) from ${table} where company_id = $1`, [a.company.id])).rows[0].count);
  const expectTextRefused = (res: CallResult, field: string) => {
    expect(res.status, res.text).to.equal(400);
    expect(res.body).to.deep.equal({
      statusCode: 400,
      message: `${field}: ${TEXT_RULE}`,
      error: 'Bad Request',
      details: { fields: [{ field, message: TEXT_RULE }] },
    });
  };

  before(async () => {
    ({ stack, call, db } = await openStack());
    a = await seedTaskTenant(call, stack.adminToken, { rate_limit_per_minute: 100_000 });
    lead = (await ext('POST', '/leads', '{"title":"Lead"}')).body;
    deal = (await ext('POST', '/deals', '{"title":"Deal"}')).body;
    task = (await ext('POST', '/tasks', JSON.stringify({ crm_task_type_id: a.types.call.id, title: 'Task' }))).body;
    expect(lead.id && deal.id && task.id).to.be.a('string');
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  describe('a NUL or a lone surrogate in any string is a 400 naming the field, and nothing is written', () => {
    it('on lead and deal creation and update (crm, integration routes)', async () => {
      const [leads, deals] = [await count('crm.leads'), await count('crm.deals')];
      for (const bad of ['a\\u0000b', '\\ud800', 'x\\udfff']) {
        expectTextRefused(await ext('POST', '/leads', `{"title":"${bad}"}`), 'title');
        expectTextRefused(await ext('POST', '/deals', `{"title":"d","person":{"name":"${bad}"}}`), 'person.name');
        expectTextRefused(await ext('PUT', `/leads/${lead.id}`, `{"title":"${bad}"}`), 'title');
        expectTextRefused(await ext('PUT', `/deals/${deal.id}`, `{"title":"t","custom_fields":[{"id":"${bad}"}]}`), 'custom_fields.0.id');
      }
      expectTextRefused(await ext('POST', '/leads', '{"title":"n","note":{"content":"\\u0000","is_pinned":false}}'), 'note.content');
      expect([await count('crm.leads'), await count('crm.deals')]).to.deep.equal([leads, deals]);
    });

    it('on tasks: a lone surrogate is refused rather than stored as U+FFFD, also in a completion stage', async () => {
      const tasks = await count('tasks.tasks');
      expectTextRefused(
        await ext('POST', '/tasks', JSON.stringify({ crm_task_type_id: a.types.call.id, title: 'x' }).replace('"x"', '"\\ud800"')),
        'title',
      );
      const done = JSON.stringify({ crm_task_type_id: a.types.call.id, crm_task_stage_id: a.stages.done.id, title: 'x' });
      expectTextRefused(await ext('POST', '/tasks', done.replace('"x"', '"a\\ud800"')), 'title');
      expectTextRefused(await ext('POST', '/tasks', done.replace('"x"', '"a\\u0000"')), 'title');
      expectTextRefused(await ext('PUT', `/tasks/${task.id}`, '{"description":"\\udc00"}'), 'description');
      expect(await count('tasks.tasks')).to.equal(tasks);
    });

    it('on the admin routes of crm, tasks and webhooks', async () => {
      const tags = await count('crm.tags');
      for (const [path, body, field] of [
        ['/tags', '{"name":"\\u0000"}', 'name'],
        ['/users', '{"name":"\\ud800","email":"x@example.test"}', 'name'],
        ['/pipelines', '{"name":"p","stages":[{"name":"\\u0000"}]}', 'stages.0.name'],
        ['/custom-fields', '{"entity":"lead","name":"\\udbff","type":"text"}', 'name'],
        ['/persons', '{"name":"\\u0000","contacts":[]}', 'name'],
        ['/organizations', '{"name":"o\\u0000"}', 'name'],
        ['/loss-reasons', '{"name":"\\ud800"}', 'name'],
        ['/task-types', '{"name":"\\u0000"}', 'name'],
        ['/task-stages', '{"name":"\\ud800"}', 'name'],
        ['/webhooks', '{"url":"https://example.test/\\u0000","events":["lead.created"]}', 'url'],
      ] as const) {
        expectTextRefused(await adm('POST', path, body), field);
      }
      expectTextRefused(
        await raw(
          'POST',
          '/admin/v1/companies',
          stack.adminToken,
          '{"name":"\\u0000","master_user":{"name":"m","email":"m@example.test"}}',
          json,
        ),
        'name',
      );
      expect(await count('crm.tags')).to.equal(tags);
    });

    it('in a search or any query parameter, and in a path', async () => {
      for (const path of ['/leads?search=%00', '/deals?search=%00', '/tasks?search=%00']) {
        const res = await ext('GET', path, undefined, {});
        expect(res.status, `${path} ${res.text}`).to.equal(400);
        expect(res.body.error).to.equal('Bad Request');
      }
      expectTextRefused(await ext('GET', '/leads?search=%00', undefined, {}), 'search');
      const path = await adm('POST', '/%ud800/tags', '{}');
      expect(path.status, path.text).to.equal(400);
      expect(path.body).to.deep.equal({
        statusCode: 400,
        message: 'path: malformed percent-encoding',
        error: 'Bad Request',
        details: { fields: [{ field: 'path', message: 'malformed percent-encoding' }] },
      });
    });
  });

  describe('media types, encodings and sizes answer alike on both APIs', () => {
    const cases = (
      name: string,
      send: (method: string, path: string, body?: string | Buffer, headers?: Record<string, string>) => Promise<CallResult>,
      path: string,
    ) => {
      it(`${name}: 415 for a body that is not application/json, a charset other than utf-8, or any content encoding`, async () => {
        for (const type of ['text/plain', 'application/xml', undefined]) {
          const res = await send('POST', path, '{"name":"n","title":"n"}', type ? { 'content-type': type } : {});
          expect(res.status, `${type} ${res.text}`).to.equal(415);
          expect(res.body).to.deep.equal({
            statusCode: 415,
            message: 'content-type: must be application/json',
            error: 'Unsupported Media Type',
          });
        }
        const latin1 = await send('POST', path, '{"name":"n"}', { 'content-type': 'application/json; charset=latin1' });
        expect(latin1.status).to.equal(415);
        expect(latin1.body.message).to.equal('content-type: charset must be utf-8');
        for (const [encoding, body] of [
          ['gzip', gzipSync('{"name":"n","title":"n"}')],
          ['gzip', '{"name":"n"}'],
          ['deflate', '{"name":"n"}'],
          ['br', '{"name":"n"}'],
          ['gzip, gzip', '{"name":"n"}'],
          ['x-unknown', '{"name":"n"}'],
        ] as const) {
          const res = await send('POST', path, body, { ...json, 'content-encoding': encoding });
          expect(res.status, `${encoding} ${res.text}`).to.equal(415);
          expect(res.body.message).to.equal('content-encoding: only identity is accepted');
        }
      });
      it(`${name}: 413 for a body over 1 MB, 400 for JSON that is not an object`, async () => {
        const large = await send('POST', path, JSON.stringify({ name: 'x'.repeat(1_100_000) }));
        expect(large.status, large.text).to.equal(413);
        expect(large.body).to.deep.equal({ statusCode: 413, message: 'body: larger than 1mb', error: 'Payload Too Large' });
        for (const body of ['null', '[]', '7']) {
          const res = await send('POST', path, body);
          expect(res.status, body).to.equal(400);
          expect(res.body.message).to.equal('body: must be a JSON object');
        }
      });
    };
    cases('crm integration route POST /leads', ext, '/leads');
    cases('tasks integration route POST /tasks', ext, '/tasks');
    cases('crm admin route POST /tags', adm, '/tags');
    cases('tasks admin route POST /task-types', adm, '/task-types');
    cases('webhooks admin route POST /webhooks', adm, '/webhooks');

    it('tasks: PUT without a body or with null is a 400, and the task is unchanged', async () => {
      for (const body of [undefined, 'null']) {
        const res = await ext('PUT', `/tasks/${task.id}`, body, body === undefined ? {} : json);
        expect(res.status, res.text).to.equal(400);
        expect(res.body.message).to.equal('body: must be a JSON object');
      }
      const content = await ext('PUT', `/tasks/${task.id}`, '{"title":"Renamed"}', { 'content-type': 'text/plain' });
      expect(content.status).to.equal(415);
      expect((await ext('GET', `/tasks/${task.id}`, undefined, {})).body.title).to.equal('Task');
    });

    it('an error about a query parameter names the query, not the body', async () => {
      const res = await ext('GET', '/tasks?unknown_parameter=1', undefined, {});
      expect(res.status, res.text).to.equal(400);
      expect(res.body.message).to.not.match(/^body:/);
    });
  });
});
