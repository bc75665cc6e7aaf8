import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { z } from 'zod';
import { apiRouter, createApiDispatcher } from '../src/http/api.js';
import { route } from '../src/http/contract.js';
import { assembleDocument } from '../src/http/openapi-document.js';
import { IdentitySigner, IdentityVerifier } from '../src/identity.js';
import { createLogger } from '../src/logging.js';
import { createMetrics } from '../src/metrics.js';
import { documentedFragment } from '../src/service.js';

const thing = z.object({ id: z.string(), name: z.string(), size: z.number().int() }).meta({ id: 'Thing' });
const createThing = route({
  method: 'post',
  path: '/things/{group}',
  operationId: 'createThing',
  summary: 'Create a thing',
  tags: ['Things'],
  permission: 'things.create',
  params: z.object({ group: z.string().regex(/^g\d+$/, 'must be g and digits') }),
  query: z.object({ size: z.coerce.number().int().default(1) }),
  headers: z.object({ 'x-tag': z.string().max(5).optional() }),
  body: z.strictObject({ name: z.string().min(1, 'must not be empty') }),
  responses: { 201: { description: 'Made', schema: thing } },
});

/** Routes declared once by a contract (decision 0100): validation and the document come from the same schemas. */
describe('route contracts', () => {
  const secret = 'contract-test-secret-0123456789ab';
  let server: Server;
  let base: string;
  const tokens: Record<string, string> = {};
  const router = apiRouter()
    .route(createThing, (_req, res, { params, query, headers, body }) => {
      res.status(201).json({ id: `${params.group}:${headers['x-tag'] ?? '-'}`, name: body.name, size: query.size });
    })
    .get('/loose', (_req, res) => res.json({}));

  before(async () => {
    const signer = new IdentitySigner(secret);
    const sign = (permissions: string[]) => signer.sign({ kind: 'integration', companyId: 'c1', userId: 'u1', keyId: 'k1', permissions });
    tokens.all = await sign(['things.create']);
    tokens.none = await sign(['other']);
    const api = createApiDispatcher({
      mounts: [{ prefix: '/x', router }],
      verifier: new IdentityVerifier(secret),
      logger: createLogger('contract-test', 'silent'),
      metrics: createMetrics('contract-test'),
    });
    server = createServer((req, res) => void (api(req, res) || res.writeHead(418).end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = async (path: string, body: unknown, token = tokens.all as string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'x-svc-identity': token, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('hands the handler the parsed path, query, headers and body', async () => {
    const res = await post('/things/g7?size=3', { name: 'a' }, undefined, { 'x-tag': 'red' });
    expect(res).to.deep.equal({ status: 201, body: { id: 'g7:red', name: 'a', size: 3 } });
  });

  it('answers 400 naming the field of a bad body, query, header or path parameter', async () => {
    expect((await post('/things/g7', { name: '' })).body.message).to.equal('name: must not be empty');
    expect((await post('/things/g7', { name: 'a', extra: 1 })).status).to.equal(400);
    type Refusal = { message: string; details: { fields: { field: string }[] } };
    const query = (await post('/things/g7?size=x', { name: 'a' })).body as Refusal;
    expect(query.message).to.match(/^size: /);
    expect(query.details.fields.map((f: { field: string }) => f.field)).to.deep.equal(['size']);
    const header = (await post('/things/g7', { name: 'a' }, undefined, { 'x-tag': 'toolong' })).body as Refusal;
    expect(header.message).to.match(/^x-tag: /);
    expect(header.details.fields.map((f: { field: string }) => f.field)).to.deep.equal(['x-tag']);
    expect((await post('/things/zz', { name: 'a' })).body).to.deep.equal({
      statusCode: 400,
      message: 'group: must be g and digits',
      error: 'Bad Request',
      details: { fields: [{ field: 'group', message: 'must be g and digits' }] },
    });
  });

  it('checks the permission before parsing anything: a key without it gets 403 even with a bad body', async () => {
    const res = await post('/things/zz', { name: '' }, tokens.none);
    expect(res.body).to.deep.equal({ statusCode: 403, message: 'The key lacks the permission things.create', error: 'Forbidden' });
  });

  it('documents the contract and lists a route registered without one', () => {
    const fragment = documentedFragment('things', [{ prefix: '/x', router }], []);
    expect(fragment.undocumented).to.deep.equal(['GET /x/loose']);
    const doc = assembleDocument([fragment], { version: '1' }) as Record<string, any>;
    expect(doc['x-undocumented-routes']).to.deep.equal(['GET /x/loose (things)']);
    const op = doc.paths['/x/things/{group}'].post;
    expect(op).to.include({ operationId: 'createThing', 'x-permission': 'things.create' });
    expect(op.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`)).to.deep.equal([
      'path:group',
      'query:size',
      'header:x-tag',
    ]);
    expect(op.requestBody.content['application/json'].schema).to.deep.include({ required: ['name'], additionalProperties: false });
    expect(op.responses['201'].content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Thing' });
    expect(Object.keys(op.responses)).to.have.members(['201', '400', '401', '403', '404', '408', '413', '415', '429', '431', '500', '503']);
    expect(doc.components.schemas.Thing).to.deep.include({ required: ['id', 'name', 'size'], additionalProperties: false });
  });

  it('refuses two services documenting one operation, or one component id with two shapes', () => {
    const fragment = documentedFragment('things', [{ prefix: '/x', router }], []);
    expect(() => assembleDocument([fragment, { ...fragment, service: 'other' }], { version: '1' })).to.throw(/documented by two services/);
    const other = apiRouter().route(
      {
        ...createThing,
        path: '/other',
        responses: { 200: { description: 'x', schema: z.object({ id: z.number() }).meta({ id: 'Thing' }) } },
      },
      () => undefined,
    );
    const second = documentedFragment('other', [{ prefix: '/x', router: other }], []);
    expect(() => assembleDocument([fragment, second], { version: '1' })).to.throw(/The schema Thing differs between services/);
  });
});
