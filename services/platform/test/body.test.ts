import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import express from 'express';
import { z } from 'zod';
import { apiRouter, createApiDispatcher } from '../src/http/api.js';
import { createHttpApp } from '../src/http/app.js';
import { CONTROL_RULE, checkFormField, checkFormText, TEXT_RULE } from '../src/http/body.js';
import { parse, parseQuery } from '../src/http/parse.js';
import { IdentitySigner, IdentityVerifier } from '../src/identity.js';
import { createLogger } from '../src/logging.js';
import { createMetrics } from '../src/metrics.js';

/**
 * What text and bodies every service accepts (decision 0110): the same table runs against the integration
 * routes (createApiDispatcher) and the Express app of the admin routes, so both answer alike.
 */
describe('request bodies, text and queries: one rule for both HTTP stacks', () => {
  const secret = 'body-test-secret-0123456789abcdef';
  const logger = createLogger('body-test', 'silent');
  const thing = z.strictObject({ name: z.string().min(1), note: z.object({ content: z.string() }).optional() });
  const listQuery = z.strictObject({ search: z.string().optional() });
  let server: Server;
  let base: string;
  let token: string;

  before(async () => {
    token = await new IdentitySigner(secret).sign({ kind: 'admin' });
    const verifier = new IdentityVerifier(secret);
    const routes = apiRouter()
      .post('/things', (req, res) => {
        res.status(201).json(parse(thing, req.body));
      })
      .put('/things/:id', (req, res) => {
        res.json({ id: req.params.id, body: parse(thing.partial(), req.body) });
      })
      .post('/things/:id/read', (req, res) => {
        res.json({ id: req.params.id, body: req.body ?? null });
      })
      .get('/things', (req, res) => {
        res.json(parseQuery(listQuery, req.query));
      })
      .stream(
        { method: 'post', path: '/uploads', operationId: 'upload', summary: 'Upload', tags: ['t'], responses: {} },
        async (req, res) => {
          let bytes = 0;
          for await (const chunk of req.raw) bytes += (chunk as Buffer).length;
          res.status(201).json({ multipart: req.body === undefined, bytes, body: null });
        },
      );
    const api = createApiDispatcher({
      mounts: [{ prefix: '/ext', router: routes }],
      verifier,
      logger,
      metrics: createMetrics('body-test-api'),
      bodyLimit: '1kb',
    });
    const app = createHttpApp({
      logger,
      metrics: createMetrics('body-test-app'),
      verifier,
      readiness: [],
      bodyLimit: '1kb',
      mountOwnBody: (a) => {
        a.post('/adm/uploads', async (req, res) => {
          let bytes = 0;
          for await (const chunk of req) bytes += (chunk as Buffer).length;
          res.status(201).json({ multipart: true, bytes, body: null });
        });
      },
      mount: (a) => {
        const r = express.Router();
        r.post('/things', (req, res) => {
          res.status(201).json(parse(thing, req.body));
        });
        r.put('/things/:id', (req, res) => {
          res.json({ id: req.params.id, body: parse(thing.partial(), req.body) });
        });
        r.post('/things/:id/read', (req, res) => {
          res.json({ id: req.params.id, body: req.body ?? null });
        });
        r.get('/things', (req, res) => {
          res.json(parseQuery(listQuery, req.query));
        });
        a.use('/adm', r);
      },
    });
    server = createServer((req, res) => {
      if (!api(req, res)) app(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = async (method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-svc-identity': token, ...headers },
      body: body === undefined ? undefined : new Uint8Array(typeof body === 'string' ? Buffer.from(body) : body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const json = { 'content-type': 'application/json' };

  for (const prefix of ['/ext', '/adm']) {
    describe(prefix === '/ext' ? 'integration routes (no Express)' : 'admin routes (Express)', () => {
      it('accepts a JSON object, surrogate pairs and +json media types', async () => {
        const ok = await call('POST', `${prefix}/things`, '{"name":"a\\ud83d\\ude00b"}', json);
        expect(ok.status).to.equal(201);
        expect(ok.body).to.deep.equal({ name: 'a😀b' });
        const charset = await call('POST', `${prefix}/things`, '{"name":"n"}', { 'content-type': 'application/json; charset=UTF-8' });
        expect(charset.status).to.equal(201);
        const merge = await call('POST', `${prefix}/things`, '{"name":"n"}', { 'content-type': 'application/merge-patch+json' });
        expect(merge.status).to.equal(201);
      });

      it('refuses a NUL or a lone surrogate in any string or key with 400 naming the field', async () => {
        for (const [body, field] of [
          ['{"name":"a\\u0000b"}', 'name'],
          ['{"name":"a\\ud800"}', 'name'],
          ['{"name":"\\udc00x"}', 'name'],
          ['{"name":"n","note":{"content":"\\u0000"}}', 'note.content'],
          ['{"name":"n","a\\u0000":1}', 'a\u0000'.replace('\u0000', '\\u0000')],
        ] as const) {
          const res = await call('POST', `${prefix}/things`, body, json);
          expect(res.status, body).to.equal(400);
          expect(res.body).to.deep.equal({
            statusCode: 400,
            message: `${field}: must not contain NUL characters or unpaired UTF-16 surrogates`,
            error: 'Bad Request',
            details: { fields: [{ field, message: 'must not contain NUL characters or unpaired UTF-16 surrogates' }] },
          });
        }
      });

      it('refuses bytes that are not UTF-8 with 400', async () => {
        const res = await call(
          'POST',
          `${prefix}/things`,
          Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
          json,
        );
        expect(res.status).to.equal(400);
        expect(res.body.message).to.equal('body: must be UTF-8');
      });

      it('refuses a body that is not application/json with 415', async () => {
        for (const type of [
          'text/plain',
          'application/xml',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          undefined,
        ]) {
          const res = await call('POST', `${prefix}/things`, '{"name":"n"}', type ? { 'content-type': type } : {});
          expect(res.status, String(type)).to.equal(415);
          expect(res.body).to.deep.equal({
            statusCode: 415,
            message: 'content-type: must be application/json',
            error: 'Unsupported Media Type',
          });
        }
      });

      it('refuses a charset other than UTF-8 and any content encoding with 415', async () => {
        for (const charset of ['latin1', 'iso-8859-1', 'utf-16', 'klingon']) {
          const res = await call('POST', `${prefix}/things`, '{"name":"n"}', { 'content-type': `application/json; charset=${charset}` });
          expect(res.status, charset).to.equal(415);
          expect(res.body.message).to.equal('content-type: charset must be utf-8');
        }
        for (const [encoding, body] of [
          ['gzip', gzipSync('{"name":"n"}')],
          ['gzip', '{"name":"n"}'],
          ['deflate', '{"name":"n"}'],
          ['br', '{"name":"n"}'],
          ['gzip, gzip', '{"name":"n"}'],
          ['x-unknown', '{"name":"n"}'],
        ] as const) {
          const res = await call('POST', `${prefix}/things`, body, { ...json, 'content-encoding': encoding });
          expect(res.status, encoding).to.equal(415);
          expect(res.body.message).to.equal('content-encoding: only identity is accepted');
        }
      });

      it('answers 413 to a body over the limit', async () => {
        const res = await call('POST', `${prefix}/things`, JSON.stringify({ name: 'x'.repeat(2000) }), json);
        expect(res.status).to.equal(413);
        expect(res.body).to.deep.equal({ statusCode: 413, message: 'body: larger than 1kb', error: 'Payload Too Large' });
      });

      it('refuses malformed JSON and a body that is not an object with 400', async () => {
        expect((await call('POST', `${prefix}/things`, '{"name":', json)).body.message).to.equal('body: malformed JSON');
        for (const body of ['null', '[]', '1', '"text"', 'true']) {
          const res = await call('PUT', `${prefix}/things/1`, body, json);
          expect(res.status, body).to.equal(400);
          expect(res.body.message).to.equal('body: must be a JSON object');
        }
      });

      it('refuses a PUT without a body with 400, and lets a POST action without a body through', async () => {
        const put = await call('PUT', `${prefix}/things/1`);
        expect(put.status).to.equal(400);
        expect(put.body.message).to.equal('body: must be a JSON object');
        const action = await call('POST', `${prefix}/things/1/read`);
        expect(action.status).to.equal(200);
        expect(action.body).to.deep.equal({ id: '1', body: null });
      });

      it('names the query, not the body, in errors about query parameters, and refuses a NUL in one', async () => {
        const unknown = await call('GET', `${prefix}/things?other=1`);
        expect(unknown.status).to.equal(400);
        expect(unknown.body.message).to.match(/^query: Unrecognized key/);
        expect(unknown.body.details).to.deep.equal({ fields: [{ field: 'other', message: 'Unrecognized key' }] });
        const nul = await call('GET', `${prefix}/things?search=%00`);
        expect(nul.status).to.equal(400);
        expect(nul.body.message).to.equal('search: must not contain NUL characters or unpaired UTF-16 surrogates');
        const ok = await call('GET', `${prefix}/things?search=a%20b`);
        expect(ok.body).to.deep.equal({ search: 'a b' });
      });

      it('answers 400 to a path whose percent-encoding is broken', async () => {
        for (const path of [`${prefix}/things/%ud800/read`, `${prefix}/things/%E0%A4%A/read`, `${prefix}/things/%ED%A0%80/read`]) {
          const res = await call('POST', path, '{}', json);
          expect(res.status, path).to.equal(400);
          expect(res.body.error).to.equal('Bad Request');
        }
      });

      it('leaves a multipart body unread for a route that declares multipart', async () => {
        const form = new FormData();
        form.append('file', new Blob(['x'.repeat(3000)]), 'a.txt');
        const res = await fetch(`${base}${prefix}/uploads`, { method: 'POST', headers: { 'x-svc-identity': token }, body: form });
        expect(res.status).to.equal(201);
        const body = (await res.json()) as { multipart: boolean; bytes: number };
        expect(body.multipart).to.equal(true);
        expect(body.bytes).to.be.greaterThan(3000); // past the JSON limit: the route reads its own stream
      });
    });
  }
});

describe('multipart text: the rule of JSON bodies for form fields and file names (decision 0135)', () => {
  const refusal = (check: () => void) => {
    try {
      check();
    } catch (err) {
      return (err as Error).message;
    }
    return null;
  };
  it('refuses text a multipart parser decoded from bytes that are not UTF-8 (U+FFFD), a NUL and a lone surrogate', () => {
    expect(refusal(() => checkFormText('r\ufffds.png', 'file.filename', 'name'))).to.equal('file.filename: must be UTF-8');
    expect(refusal(() => checkFormText('a\u0000b', 'note'))).to.equal(`note: ${TEXT_RULE}`);
    expect(refusal(() => checkFormText('a\ud800', 'note'))).to.equal(`note: ${TEXT_RULE}`);
  });
  it('keeps line breaks and tabs in text, refuses every control character in a name', () => {
    expect(refusal(() => checkFormText('line 1\r\nline 2\tend', 'body'))).to.equal(null);
    for (const c of ['\t', '\n', '\u0001', '\u001b', '\u007f', '\u0085', '\u009f'])
      expect(refusal(() => checkFormText(`a${c}b`, 'file.filename', 'name'))).to.equal(`file.filename: ${CONTROL_RULE}`);
    expect(refusal(() => checkFormText('relatório – ação 日本.pdf', 'file.filename', 'name'))).to.equal(null);
  });
  it('checks a field`s name as a name, shown escaped', () => {
    expect(refusal(() => checkFormField('no\u0001te', 'x'))).to.equal(`no\\u0001te: ${CONTROL_RULE}`);
    expect(refusal(() => checkFormField('note', 'a\u0000'))).to.equal(`note: ${TEXT_RULE}`);
    expect(refusal(() => checkFormField('crm_lead_id', 'x\n', 'name'))).to.equal(`crm_lead_id: ${CONTROL_RULE}`);
    expect(refusal(() => checkFormField('body', 'x\n'))).to.equal(null);
  });
});
