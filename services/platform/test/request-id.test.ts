import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { apiRouter, createApiDispatcher } from '../src/http/api.js';
import { createHttpApp } from '../src/http/app.js';
import { IdentitySigner, IdentityVerifier } from '../src/identity.js';
import { createLogger } from '../src/logging.js';
import { createMetrics } from '../src/metrics.js';
import { requestIdOf } from '../src/request-id.js';

/** Request ids in a service (decision 0102): answered on every response and on every log line of the request. */
describe('request ids in a service', () => {
  const secret = 'request-id-test-secret-0123456789';
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const logger = createLogger('rid-test', 'info', sink);
  let server: Server;
  let base: string;
  let token: string;

  before(async () => {
    token = await new IdentitySigner(secret).sign({ kind: 'integration', companyId: 'c1', userId: 'u1', keyId: 'k1', permissions: ['*'] });
    const metrics = createMetrics('rid-test');
    const verifier = new IdentityVerifier(secret);
    const router = apiRouter().get('/work', async (_req, res) => {
      await new Promise((r) => setTimeout(r, 5));
      logger.info('after an await');
      res.json({ ok: true });
    });
    const api = createApiDispatcher({ mounts: [{ prefix: '/x', router }], verifier, logger, metrics });
    const app = createHttpApp({
      logger,
      metrics,
      verifier,
      readiness: [],
      mount: (a) =>
        a.get('/admin-ish', (_req, res) => {
          logger.info('express route');
          res.json({});
        }),
    });
    server = createServer((req, res) => void (api(req, res) || app(req, res)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('takes a well-formed id and replaces anything else with a UUID', () => {
    expect(requestIdOf('abc-123_x:y')).to.equal('abc-123_x:y');
    for (const bad of [undefined, '', 'a b', 'x'.repeat(129), 'a\u00e9']) expect(requestIdOf(bad)).to.match(/^[0-9a-f-]{36}$/);
  });

  it('answers the id and writes it on the log lines of an API route, across awaits', async () => {
    const res = await fetch(`${base}/x/work`, { headers: { 'x-svc-identity': token, 'x-request-id': 'rid-api-1' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-request-id')).to.equal('rid-api-1');
    expect(lines.find((l) => l.msg === 'after an await')).to.include({ request_id: 'rid-api-1', service: 'rid-test' });
  });

  it('does the same on the Express routes, and on a 401', async () => {
    const res = await fetch(`${base}/admin-ish`, { headers: { 'x-svc-identity': token, 'x-request-id': 'rid-express-1' } });
    expect(res.headers.get('x-request-id')).to.equal('rid-express-1');
    expect(lines.find((l) => l.msg === 'express route')).to.include({ request_id: 'rid-express-1' });
    const refused = await fetch(`${base}/x/work`, { headers: { 'x-request-id': 'rid-401' } });
    expect(refused.status).to.equal(401);
    expect(refused.headers.get('x-request-id')).to.equal('rid-401');
  });

  it('writes no request id on lines outside a request', () => {
    logger.info('outside');
    expect(lines.find((l) => l.msg === 'outside')).to.not.have.property('request_id');
  });
});
