import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { z } from 'zod';
import { conflict } from '../src/errors.js';
import { apiRouter, createApiDispatcher } from '../src/http/api.js';
import { integrationOf } from '../src/http/app.js';
import { route } from '../src/http/contract.js';
import { parse } from '../src/http/parse.js';
import { IdentitySigner, IdentityVerifier } from '../src/identity.js';
import { createLogger } from '../src/logging.js';
import { createMetrics } from '../src/metrics.js';

/** The integration routes served without Express (decision 0014). */
describe('API routes without Express (createApiDispatcher)', () => {
  const secret = 'api-test-secret-0123456789abcdef';
  const metrics = createMetrics('api-test');
  let server: Server;
  let base: string;
  let token: string;
  let fellThrough: string[];

  before(async () => {
    token = await new IdentitySigner(secret).sign({ kind: 'integration', companyId: 'c1', userId: 'u1', keyId: 'k1', permissions: ['*'] });
    const r = apiRouter()
      .get('/things/:id', (req, res) => {
        res.json({ id: req.params.id, query: req.query, company: integrationOf(req).companyId, header: req.header('X-Extra') ?? null });
      })
      .post('/things', (req, res) => {
        const body = parse(z.strictObject({ name: z.string().min(1) }), req.body);
        res.status(201).setHeader('x-made', 'yes').json(body);
      })
      .put('/things/:id', () => {
        throw conflict('Busy');
      })
      .delete('/things/:id', () => {
        throw new Error('boom');
      })
      .stream(
        route({
          method: 'post',
          path: '/uploads',
          operationId: 'upload',
          summary: 'Upload',
          tags: [],
          body: z.object({ name: z.string().optional() }),
          responses: {},
        }),
        async (req, res, { body }) => {
          let bytes = 0;
          if (!/json/.test(req.header('content-type') ?? '')) for await (const chunk of req.raw) bytes += (chunk as Buffer).length;
          res.status(201).json({ body, bytes });
        },
      );
    const api = createApiDispatcher({
      mounts: [{ prefix: '/integrations/external', router: r }],
      verifier: new IdentityVerifier(secret),
      logger: createLogger('api-test', 'silent'),
      metrics,
      bodyLimit: '1kb',
    });
    fellThrough = [];
    server = createServer((req, res) => {
      if (api(req, res)) return;
      fellThrough.push(`${req.method} ${req.url}`);
      res.writeHead(418).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/integrations/external`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = async (method: string, path: string, init: { body?: string; headers?: Record<string, string>; auth?: boolean } = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(init.auth === false ? {} : { 'x-svc-identity': token }), ...init.headers },
      body: init.body,
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };

  it('serves a matched route with its params, query and headers, as the key identity', async () => {
    const res = await call('GET', '/things/42?a=1&b=x&b=y', { headers: { 'x-extra': 'e' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(res.body).to.deep.equal({ id: '42', query: { a: '1', b: ['x', 'y'] }, company: 'c1', header: 'e' });
  });

  it('answers 401 with the spec body without a valid identity token, and never runs the handler', async () => {
    for (const headers of [{}, { 'x-svc-identity': 'not-a-token' }] as Record<string, string>[]) {
      const res = await call('GET', '/things/1', { auth: false, headers });
      expect(res.status).to.equal(401);
      expect(res.body).to.include({ statusCode: 401, error: 'Unauthorized' });
    }
  });

  it('parses a JSON body; a bad one is a 400 naming the field, malformed JSON a 400, too large a 413, not JSON a 415', async () => {
    const json = { 'content-type': 'application/json' };
    const ok = await call('POST', '/things', { body: '{"name":"n"}', headers: json });
    expect(ok.status).to.equal(201);
    expect(ok.headers.get('x-made')).to.equal('yes');
    expect(ok.body).to.deep.equal({ name: 'n' });
    const bad = await call('POST', '/things', { body: '{"name":"","extra":1}', headers: json });
    expect(bad.status).to.equal(400);
    expect(bad.body.message).to.contain('name').and.to.contain('extra');
    // The field list (decision 0141): the unknown member under its own name, where `message` says it of the body.
    expect(bad.body.details.fields.map((f: { field: string }) => f.field)).to.deep.equal(['name', 'extra']);
    const malformed = await call('POST', '/things', { body: '{"name":', headers: json });
    expect(malformed.body).to.deep.equal({
      statusCode: 400,
      message: 'body: malformed JSON',
      error: 'Bad Request',
      details: { fields: [{ field: 'body', message: 'malformed JSON' }] },
    });
    const large = await call('POST', '/things', { body: JSON.stringify({ name: 'x'.repeat(2000) }), headers: json });
    expect(large.status).to.equal(413);
    expect(large.body.message).to.equal('body: larger than 1kb');
    const notJson = await call('POST', '/things', { body: 'name=n', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(notJson.status).to.equal(415);
  });

  it('maps our errors to their status and anything else to a 500 with the spec body', async () => {
    expect((await call('PUT', '/things/1', { body: '{}', headers: { 'content-type': 'application/json' } })).body).to.deep.equal({
      statusCode: 409,
      message: 'Busy',
      error: 'Conflict',
    });
    expect((await call('DELETE', '/things/1')).body).to.deep.equal({
      statusCode: 500,
      message: 'Internal server error',
      error: 'Internal Server Error',
    });
  });

  it('leaves other methods and paths to the next listener (the Express app)', async () => {
    fellThrough.length = 0;
    for (const [m, p] of [
      ['PATCH', '/things/1'],
      ['GET', '/things'],
      ['GET', '/THINGS/1'],
      ['GET', '/other'],
    ] as const) {
      expect((await call(m, p)).status, `${m} ${p}`).to.equal(418);
    }
    expect(fellThrough).to.have.length(4);
  });

  it('records the request duration under the route pattern', async () => {
    const text = await metrics.registry.metrics();
    expect(text).to.match(/http_request_duration_seconds_count\{[^}]*route="\/integrations\/external\/things\/:id"[^}]*status="200"/);
  });

  it('leaves a body that is not JSON unread for a streaming route (beyond the JSON limit), and parses a JSON one', async () => {
    const big = 'x'.repeat(64 * 1024);
    const raw = await call('POST', '/uploads', { body: big, headers: { 'content-type': 'application/octet-stream' } });
    expect(raw.status).to.equal(201);
    expect(raw.body).to.deep.equal({ body: {}, bytes: big.length });
    const json = await call('POST', '/uploads', { body: JSON.stringify({ name: 'n' }), headers: { 'content-type': 'application/json' } });
    expect(json.body).to.deep.equal({ body: { name: 'n' }, bytes: 0 });
  });
});
