import { createConfig, lintFromString } from '@redocly/openapi-core';
import { EXTENSION_EVENT_KEYS, SPEC_EVENT_KEYS } from '@svc/platform/events/catalog';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import { contractValidator, localDocument } from '../support/contract.js';
import { committedExamples } from '../support/examples.js';
import { type Stack, startStack } from '../support/stack.js';

type Json = Record<string, any>;

describe('the OpenAPI document at /integrations/external/openapi.json', () => {
  let stack: Stack;
  let doc: Json;
  before(async () => {
    stack = await startStack();
    const res = await fetch(`${stack.gatewayUrl}/integrations/external/openapi.json`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    doc = (await res.json()) as Json;
  });
  after(() => stack?.stop());

  it('is served without a key, as OpenAPI 3.1', () => {
    expect(doc.openapi).to.match(/^3\.1\./);
    expect(doc.components.securitySchemes.integrationKey).to.deep.include({ type: 'http', scheme: 'bearer' });
  });

  it('names /integrations/external as its server, its paths relative to it, and Retry-After on every 429', () => {
    expect(doc.servers).to.deep.equal([{ url: '/integrations/external', description: 'The gateway this document is served by.' }]);
    expect(Object.keys(doc.paths).filter((path) => path.startsWith('/integrations/'))).to.deep.equal([]);
    expect(doc.components.responses.Error429.headers['Retry-After']).to.deep.equal({ $ref: '#/components/headers/Retry-After' });
    expect(doc.components.headers['Retry-After'].schema).to.deep.equal({ type: 'integer' });
  });

  it('is the document the contract test checks responses against (built from the same service definitions)', () => {
    expect(doc).to.deep.equal(localDocument());
  });

  it('documents every route the services serve (a route without a contract is listed by name)', () => {
    expect(doc['x-undocumented-routes'] ?? [], 'routes registered without a contract').to.deep.equal([]);
  });

  it('describes the lead, deal, task and custom-field routes with their permission, body and responses', () => {
    const p = (path: string) => doc.paths[path];
    expect(Object.keys(p('/leads'))).to.have.members(['get', 'post']);
    expect(Object.keys(p('/leads/{ref}'))).to.have.members(['get', 'put']);
    expect(Object.keys(p('/deals'))).to.have.members(['get', 'post']);
    expect(Object.keys(p('/deals/{ref}'))).to.have.members(['get', 'put']);
    expect(Object.keys(p('/tasks'))).to.have.members(['get', 'post']);
    expect(Object.keys(p('/tasks/{id}'))).to.have.members(['get', 'put', 'delete']);
    expect(Object.keys(p('/custom-fields'))).to.have.members(['get']);
    const create = p('/leads').post;
    expect(create['x-permission']).to.equal('crm/lead.create');
    expect(create.requestBody.content['application/json'].schema.properties.title).to.include({ minLength: 1, maxLength: 150 });
    expect(create.parameters.map((x: Json) => `${x.in}:${x.name}`)).to.include('header:x-idempotency-key');
    expect(create.responses['201'].content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/CreationResponse' });
    expect(Object.keys(create.responses)).to.include.members(['400', '401', '403', '409', '429', '500']);
    // A 400 may list its fields (decision 0141); every other error keeps exactly the spec's three.
    expect(doc.components.responses.Error400.content['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/ValidationErrorBody',
    });
    expect(doc.components.responses.Error404.content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/ErrorBody' });
    expect(doc.components.schemas.ValidationErrorBody.required).to.deep.equal(['statusCode', 'message', 'error']);
    expect(doc.components.schemas.ErrorBody).to.deep.include({ required: ['statusCode', 'message', 'error'], additionalProperties: false });
    expect(doc.components.schemas.ErrorBody.properties).to.have.all.keys('statusCode', 'message', 'error');
    // Parameters carry a recorded example besides (decision 0187).
    expect(p('/leads/{ref}').get.parameters.map(({ example: _example, ...param }: Json) => param)).to.deep.include({
      name: 'ref',
      in: 'path',
      required: true,
      schema: { type: 'string' },
      description: 'The lead’s UUID, its numeric per-company code, or `ext:` and its external_id.',
    });
    const leadBatch = p('/leads/batch').post;
    expect(leadBatch.responses['200'].content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/BatchResponse' });
    expect(Object.keys(leadBatch.responses)).to.include.members(['400', '403', '429']);
    expect(Object.keys(p('/deals/batch'))).to.have.members(['post']);
    // A route taking JSON or a streamed multipart body documents both.
    const scheduled = p('/chats/{id}/scheduled-messages').post.requestBody.content;
    expect(Object.keys(scheduled)).to.have.members(['application/json', 'multipart/form-data']);
    expect(scheduled['multipart/form-data'].schema.properties).to.include.keys('scheduled_at', 'file');
  });

  it('has a webhook per event key of the catalog, and no other, in the spec envelope', () => {
    expect(SPEC_EVENT_KEYS).to.have.length(33);
    expect(Object.keys(doc.webhooks)).to.have.members([...SPEC_EVENT_KEYS, ...EXTENSION_EVENT_KEYS]);
    expect(doc.webhooks['delivery.updated'].post.requestBody.content['application/json'].schema.properties.payload).to.deep.equal({
      $ref: '#/components/schemas/DeliveryUpdatedPayload',
    });
    // An update event is its snapshot with every field as the spec has it, plus the optional changes (decision 0178).
    const updated = doc.components.schemas.DeliveryUpdatedPayload;
    const snapshot = doc.components.schemas.DeliverySnapshot;
    expect(updated.properties).to.deep.equal({ ...snapshot.properties, changes: { $ref: '#/components/schemas/DeliveryChanges' } });
    expect(updated.required).to.deep.equal(snapshot.required);
    expect(doc.components.schemas.DeliveryChanges.properties.title).to.deep.equal({
      type: 'object',
      properties: { from: { type: 'string' }, to: { type: 'string' } },
      required: ['from', 'to'],
      additionalProperties: false,
    });
    expect(doc.paths['/satisfaction/links'].post.responses['201'].content['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/SatisfactionLink',
    });
    const body = doc.webhooks['task.completed'].post.requestBody.content['application/json'].schema;
    expect(body.required).to.have.members(['event_key', 'payload']);
    expect(body.properties.event_key).to.deep.include({ const: 'task.completed' });
    expect(body.properties.payload).to.deep.equal({ $ref: '#/components/schemas/TaskCompletedPayload' });
  });

  it('compiles: every schema and every reference resolves', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc');
    const refs = new Set<string>();
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') refs.add(v);
          // Recorded examples are data (the event-types answer holds JSON Schemas with refs of their own).
          else if (k !== 'example') walk(v);
        }
      }
    };
    walk({ paths: doc.paths, webhooks: doc.webhooks, components: doc.components });
    for (const r of refs) {
      expect(r).to.match(/^#\/components\/(schemas|responses|headers|parameters)\/[\w.-]+$/);
      const [, , kind, name] = r.split('/');
      expect(doc.components[kind as string], r).to.have.property(name as string);
    }
    for (const name of Object.keys(doc.components.schemas))
      expect(ajv.getSchema(`doc#/components/schemas/${name}`), name).to.be.a('function');
  });
});

describe('the OpenAPI document’s examples and lint (decision 0187)', () => {
  const validator = contractValidator();
  const examples = committedExamples;

  it('has a recorded example for every operation: its 2xx answer, its body when it takes one, its path parameters', () => {
    const lacking: string[] = [];
    for (const key of validator.operationKeys()) {
      const example = examples.operations[key];
      const [method = '', template = ''] = key.split(' ');
      const op = validator.doc.paths[template][method.toLowerCase()];
      if (!example) lacking.push(`${key}: no example`);
      else {
        if (example.response === undefined && example.status !== '204') lacking.push(`${key}: no answer body`);
        if (op.requestBody?.required && example.body === undefined) lacking.push(`${key}: no request body`);
        for (const name of template.match(/\{(\w+)\}/g) ?? []) if (!example.path?.[name.slice(1, -1)]) lacking.push(`${key}: no ${name}`);
      }
    }
    expect(lacking, 'run `npm run examples -w test` to record them').to.deep.equal([]);
    expect(Object.keys(validator.doc.webhooks).filter((key) => examples.webhooks[key] === undefined)).to.deep.equal([]);
  });

  it('holds only examples that fit their schemas today, so they cannot drift', () => {
    const problems = Object.entries(examples.operations).flatMap(([key, example]) => validator.exampleProblems(key, example));
    problems.push(...Object.entries(examples.webhooks).flatMap(([key, body]) => validator.webhookProblems(key, body)));
    expect(problems, 'run `npm run examples -w test` to record them again').to.deep.equal([]);
  });

  it('shows them in the served document', () => {
    const [key, example] = Object.entries(examples.operations).find(([, e]) => e.response !== undefined) ?? [];
    expect(key).to.be.a('string');
    const [method = '', template = ''] = (key as string).split(' ');
    const answer = validator.doc.paths[template][method.toLowerCase()].responses[example!.status];
    expect(answer.content['application/json'].example).to.deep.equal(example!.response);
  });

  it('passes Redocly’s recommended rules with no error and no warning', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(validator.doc), absoluteRef: 'openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).to.deep.equal([]);
  });
});

describe('the documentation page at /docs', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack?.stop());

  it('renders the document with swagger-ui served by the gateway itself: no script, style or font from elsewhere', async () => {
    const res = await fetch(`${stack.gatewayUrl}/docs`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.headers.get('content-security-policy')).to.include("script-src 'self'");
    const html = await res.text();
    expect(html).to.not.match(/https?:\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(assets).to.include.members(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/init.js']);
    for (const asset of assets) {
      const a = await fetch(`${stack.gatewayUrl}${asset}`);
      expect(a.status, asset).to.equal(200);
      expect((await a.arrayBuffer()).byteLength, asset).to.be.greaterThan(0);
    }
    const init = await (await fetch(`${stack.gatewayUrl}/docs/init.js`)).text();
    expect(init).to.include("url: '/integrations/external/openapi.json'");
  });

  it('serves only the files the page needs', async () => {
    expect((await fetch(`${stack.gatewayUrl}/docs/package.json`)).status).to.equal(404);
    expect((await fetch(`${stack.gatewayUrl}/docs/..%2Fpackage.json`)).status).to.equal(404);
  });
});
