import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Child, loggedPort, spawnEntry, waitReady } from '../support/processes.js';
import { type Stack, startStack } from '../support/stack.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What browsers and support need of the gateway (decision 0102): CORS, request ids and the access log. */
describe('gateway conventions: CORS, request ids and the access log', () => {
  let stack: Stack;
  let gateway: Child;
  let base: string;
  let t: Tenant;
  let browserKey: string;
  const page = 'https://app.example.com';

  before(async function () {
    this.timeout(90_000);
    stack = await startStack();
    // A gateway process of its own, logging at info, so its access log can be read.
    gateway = spawnEntry('gateway/src/main.ts', { ...stack.gatewayEnv, PORT: '0', LOG_LEVEL: 'info' });
    base = `http://127.0.0.1:${await loggedPort(gateway)}`;
    await waitReady(base);
    t = await seedTenant(client(base).call, stack.adminToken);
    const key = await adminOf(client(base).call, stack.adminToken)('POST', `/companies/${t.company.id}/keys`, {
      created_by_user_id: t.user.id,
      permissions: ['*'],
      allowed_domain: 'app.example.com',
    });
    expect(key.status, key.text).to.equal(201);
    browserKey = key.body.key;
  });
  after(async () => {
    await gateway?.stop();
    await stack?.stop();
  });

  const preflight = (path: string, origin: string, method = 'POST', headers = 'authorization, content-type, x-idempotency-key') =>
    fetch(`${base}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });

  describe('CORS on /integrations/external/*', () => {
    it('answers a preflight without a key: 204 with the methods and headers a browser may send', async () => {
      const res = await preflight('/integrations/external/leads', page);
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal(page);
      expect(res.headers.get('access-control-allow-methods')).to.include('POST');
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').split(', ');
      expect(allowed).to.include.members(['authorization', 'content-type', 'x-idempotency-key', 'x-request-id']);
      expect(res.headers.get('access-control-max-age')).to.equal('600');
      expect(res.headers.get('vary')).to.include('Origin');
    });

    it('reflects the allowed origin on the answer of a key with allowed_domain, errors included', async () => {
      const created = await fetch(`${base}/integrations/external/leads`, {
        method: 'POST',
        headers: { origin: page, authorization: `Bearer ${browserKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'From the browser' }),
      });
      expect(created.status).to.equal(201);
      expect(created.headers.get('access-control-allow-origin')).to.equal(page);
      expect(created.headers.get('access-control-expose-headers')).to.include('x-request-id');
      const invalid = await fetch(`${base}/integrations/external/leads`, {
        method: 'POST',
        headers: { origin: page, authorization: `Bearer ${browserKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: '' }),
      });
      expect(invalid.status).to.equal(400);
      expect(invalid.headers.get('access-control-allow-origin')).to.equal(page);
    });

    it('keeps the spec’s domain check: another origin passes the preflight, gets 401 and can read it (CORS headers on the 401)', async () => {
      expect((await preflight('/integrations/external/leads', 'https://evil.test')).status).to.equal(204);
      const res = await fetch(`${base}/integrations/external/leads`, {
        method: 'POST',
        headers: { origin: 'https://evil.test', authorization: `Bearer ${browserKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'x' }),
      });
      expect(res.status).to.equal(401);
      expect(res.headers.get('access-control-allow-origin')).to.equal('https://evil.test');
      expect(res.headers.get('access-control-expose-headers')).to.include('x-request-id');
      expect(await res.json()).to.deep.equal({
        statusCode: 401,
        message: 'Origin domain not authorized for this key',
        error: 'Unauthorized',
      });
      // An Origin no browser sends is refused without the headers.
      for (const origin of ['ftp://app.example.com', 'https://app.example.com/x', 'https://app%2eexample.com']) {
        const odd = await fetch(`${base}/integrations/external/leads`, { headers: { origin, authorization: `Bearer ${browserKey}` } });
        expect(odd.status, origin).to.equal(401);
        expect(odd.headers.get('access-control-allow-origin'), origin).to.equal(null);
      }
    });

    it('gives no CORS header to a key without allowed_domain (a server key), nor without an Origin', async () => {
      const res = await fetch(`${base}/integrations/external/leads`, { headers: { origin: page, authorization: `Bearer ${t.key.key}` } });
      expect(res.status).to.equal(200);
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
    });

    it('an OPTIONS that is not a preflight (no Origin) still needs a key', async () => {
      expect((await fetch(`${base}/integrations/external/leads`, { method: 'OPTIONS' })).status).to.equal(401);
    });
  });

  describe('x-request-id', () => {
    it('is made for every answer when the caller sends none: proxied, refused, admin and health', async () => {
      const answers = await Promise.all([
        fetch(`${base}/integrations/external/leads`, { headers: { authorization: `Bearer ${t.key.key}` } }),
        fetch(`${base}/integrations/external/leads`),
        fetch(`${base}/admin/v1/companies/${t.company.id}`, { headers: { authorization: `Bearer ${stack.adminToken}` } }),
        fetch(`${base}/healthz`),
        preflight('/integrations/external/leads', page),
      ]);
      for (const res of answers) expect(res.headers.get('x-request-id'), res.url).to.match(UUID);
      expect(new Set(answers.map((r) => r.headers.get('x-request-id'))).size).to.equal(answers.length);
    });

    it('is the caller’s when well formed, and replaced when not', async () => {
      const given = 'support-ticket-4711:abc';
      const res = await fetch(`${base}/integrations/external/leads`, {
        headers: { authorization: `Bearer ${t.key.key}`, 'x-request-id': given },
      });
      expect(res.headers.get('x-request-id')).to.equal(given);
      for (const bad of ['has space', 'x'.repeat(129), '<script>']) {
        const r = await fetch(`${base}/integrations/external/leads`, {
          headers: { authorization: `Bearer ${t.key.key}`, 'x-request-id': bad },
        });
        expect(r.headers.get('x-request-id'), bad).to.match(UUID);
      }
    });

    it('reaches the service with the request', async () => {
      // A gateway whose tasks upstream is a loopback server that records what it is sent.
      const seen: (string | undefined)[] = [];
      const upstream = http.createServer((req, res) => {
        seen.push(req.headers['x-request-id'] as string | undefined);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"total":0,"records":[],"next_cursor":null}');
      });
      await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
      const tasksUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
      const other = spawnEntry('gateway/src/main.ts', { ...stack.gatewayEnv, PORT: '0', LOG_LEVEL: 'info', TASKS_URL: tasksUrl });
      try {
        const url = `http://127.0.0.1:${await loggedPort(other)}`;
        const given = await fetch(`${url}/integrations/external/tasks`, {
          headers: { authorization: `Bearer ${t.key.key}`, 'x-request-id': 'given-1' },
        });
        expect(given.status).to.equal(200);
        const made = await fetch(`${url}/integrations/external/tasks`, { headers: { authorization: `Bearer ${t.key.key}` } });
        expect(seen).to.deep.equal(['given-1', made.headers.get('x-request-id')]);
      } finally {
        await other.stop();
        await new Promise((r) => upstream.close(r));
      }
    });
  });

  describe('the access log', () => {
    it('writes one line per request: method, route, path, status, duration, key id and request id, never the key', async () => {
      const id = `log-${Date.now()}`;
      const res = await fetch(`${base}/integrations/external/leads?search=secret-term`, {
        headers: { authorization: `Bearer ${t.key.key}`, 'x-request-id': id },
      });
      expect(res.status).to.equal(200);
      // The gateway is a child process: its stdout arrives when the machine gets to it, so poll with a deadline.
      const line = await eventually(
        () =>
          gateway
            .output()
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((l) => l.msg === 'request' && l.request_id === id),
        10_000,
      );
      expect(line).to.deep.include({
        method: 'GET',
        route: 'external',
        path: '/integrations/external/leads',
        status: 200,
        key_id: t.key.id,
        request_id: id,
      });
      expect(line?.duration_ms).to.be.a('number');
      expect(gateway.output()).to.not.include(t.key.key);
      expect(gateway.output()).to.not.include('secret-term');
    });
  });
});
