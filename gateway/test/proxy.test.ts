import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import type { RunningGrpcServer } from '@svc/platform/grpc/server';
import { eventually, TEST_REDIS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import { type RunningGateway, startGateway } from '../src/gateway.js';
import { oneUpstream, startKeyResolver } from './support/fake-crm.js';

const PLAIN = `svc_${'p'.repeat(43)}`;
const ADMIN = 'admin-token-0123456789';
const BODY_IDLE_MS = 400;

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** One raw HTTP/1.1 exchange over a socket the test controls: headers and part of a body, then silence. */
function stalledRequest(
  port: number,
  head: string,
  partialBody: string,
): { socket: Socket; answer: Promise<{ text: string; ms: number }> } {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1');
  socket.write(head + partialBody);
  let text = '';
  socket.on('data', (d) => (text += d.toString()));
  const answer = new Promise<{ text: string; ms: number }>((resolve) =>
    socket.on('close', () => resolve({ text, ms: Date.now() - started })),
  );
  return { socket, answer };
}

/** The gateway in front of services it cannot reach or that hold requests: what a client sees, and what the services see. */
describe('gateway proxy: unreachable services and stalled request bodies', () => {
  let crmGrpc: RunningGrpcServer;
  let upstream: Server;
  const upstreamRequests: { req: IncomingMessage; aborted: boolean; bytes: number }[] = [];
  let down: RunningGateway;
  /** The lines `down` wrote. */
  const downLines: Record<string, unknown>[] = [];
  const downLog = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) downLines.push(JSON.parse(l));
      done();
    },
  });
  let gateway: RunningGateway;
  const env = (over: Record<string, string>) => ({
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: `g${randomBytes(4).toString('hex')}:`,
    ADMIN_TOKEN: ADMIN,
    IDENTITY_TOKEN_SECRET: 'i'.repeat(32),
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
    BODY_IDLE_TIMEOUT_MS: String(BODY_IDLE_MS),
    UPSTREAM_TIMEOUT_MS: '20000',
    ...over,
  });

  before(async () => {
    crmGrpc = await startKeyResolver({ [PLAIN]: 'key-1' });
    // A service that reads whatever body it gets, slowly or not, and answers once it has all of it.
    upstream = createServer((req, res) => {
      // A route that refuses before reading the body (a permission check ahead of an upload), asked to close the
      // connection as httpxy asks for a chunked body: Node answers `Connection: close`.
      if (req.url?.startsWith('/integrations/external/proposals/refused/')) {
        res.writeHead(403, { 'content-type': 'application/json' }).end('{"statusCode":403}');
        return;
      }
      const seen = { req, aborted: false, bytes: 0 };
      upstreamRequests.push(seen);
      req.on('data', (d: Buffer) => (seen.bytes += d.length));
      req.on('close', () => (seen.aborted = !req.complete));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const closed = `http://127.0.0.1:${await closedPort()}`;
    gateway = await startGateway(env(oneUpstream(up, crmGrpc.port)));
    down = await startGateway(
      env({
        CRM_URL: closed,
        TASKS_URL: closed,
        CHAT_URL: closed,
        FILES_URL: closed,
        WEBHOOKS_URL: closed,
        CRM_GRPC_URL: `127.0.0.1:${await closedPort()}`,
        LOG_LEVEL: 'warn',
      }),
      downLog,
    );
  });
  after(async () => {
    await gateway?.stop();
    await down?.stop();
    await new Promise<void>((r) => upstream.close(() => r()));
    await crmGrpc.stop(100);
  });

  it('answers 404 for a resource named like a property of every object, and sends nothing to a service', async () => {
    const before = upstreamRequests.length;
    for (const resource of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const res = await fetch(`${gateway.url}/integrations/external/${resource}/1`, { headers: { authorization: `Bearer ${PLAIN}` } });
      const body = (await res.json()) as { statusCode: number; message: string };
      expect(res.status, resource).to.equal(404);
      expect(body.message).to.equal(`Cannot GET /integrations/external/${resource}/1`);
    }
    expect(upstreamRequests.length).to.equal(before);
  });

  it('answers 503 with a fixed message, never an internal address, when crm cannot be reached for the key or the route', async () => {
    for (const [path, token] of [
      ['/integrations/external/leads', PLAIN],
      ['/admin/v1/companies/c-1/tags', ADMIN],
    ] as const) {
      const res = await fetch(`${down.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      expect(res.status, text).to.equal(503);
      expect(text).to.not.match(/127\.0\.0\.1|ECONNREFUSED|connect|Last error/i);
      expect(JSON.parse(text)).to.have.keys('statusCode', 'message', 'error');
    }
  });

  it('names the request on the line of each failure, the key look-up and the proxy hop (no AsyncLocalStorage: decision 0146)', async () => {
    for (const [path, token, id] of [
      ['/integrations/external/leads', PLAIN, `rid-key-${Date.now()}`],
      ['/admin/v1/companies/c-1/tags', ADMIN, `rid-hop-${Date.now()}`],
    ] as const) {
      const res = await fetch(`${down.url}${path}`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': id } });
      expect(res.status).to.equal(503);
      expect(res.headers.get('x-request-id')).to.equal(id);
      const line = await eventually(() => downLines.find((l) => l.request_id === id), 5000);
      expect(line).to.include({ msg: 'upstream failed', level: 40 });
    }
  });

  for (const [name, path, token] of [
    ['an integration route', '/integrations/external/leads', PLAIN],
    ['an admin route', '/admin/v1/companies/c-1/tags', ADMIN],
  ] as const) {
    it(`answers 408 to a short body that stalls on ${name}; the service never saw the request (decision 0151)`, async () => {
      upstreamRequests.length = 0;
      const head = `POST ${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n`;
      const { answer } = stalledRequest(gateway.port, head, '{"title":"slow');
      const { text } = await answer;
      expect(text).to.match(/^HTTP\/1\.1 408 /);
      expect(text).to.contain('"statusCode":408').and.to.contain('"error":"Request Timeout"');
      expect(text).to.contain(`body: nothing received for ${BODY_IDLE_MS} ms`);
      expect(upstreamRequests).to.deep.equal([]);
    });

    it(`answers 408 to a streamed body that stalls on ${name}, and frees the upstream socket it had opened`, async () => {
      upstreamRequests.length = 0;
      const head = `POST ${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
      const { answer } = stalledRequest(gateway.port, head, 'e\r\n{"title":"slow\r\n');
      const { text } = await answer;
      expect(text).to.match(/^HTTP\/1\.1 408 /);
      expect(text).to.contain('"statusCode":408').and.to.contain('"error":"Request Timeout"');
      await eventually(() => expect(upstreamRequests.map((r) => r.aborted)).to.deep.equal([true]));
    });
  }

  it('answers a refusal that comes before the body was sent without closing the client connection under it', async () => {
    const socket = connect(gateway.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    const close = new Promise<void>((r) => socket.on('close', () => r()));
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    socket.write(
      `POST /integrations/external/proposals/refused/attachments HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${PLAIN}\r\n` +
        `content-type: multipart/form-data; boundary=b\r\ntransfer-encoding: chunked\r\n\r\n${chunk('--b\r\n')}`,
    );
    await eventually(() => expect(text).to.contain('{"statusCode":403}'));
    const [head] = text.split('\r\n\r\n');
    expect(head).to.match(/^HTTP\/1\.1 403 /);
    expect(head).to.not.match(/^connection: close/im);
    // The client goes on sending the body it had started, then asks again on the same connection.
    for (let i = 0; i < 20; i++) socket.write(chunk('x'.repeat(1000)));
    socket.write(chunk('\r\n--b--\r\n') + chunk(''));
    text = '';
    socket.write(`GET /integrations/external/leads HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${PLAIN}\r\nconnection: close\r\n\r\n`);
    await close;
    expect(text, text).to.match(/^HTTP\/1\.1 200 /);
  });

  it('lets a body through that arrives slowly but never stalls as long as the idle limit', async () => {
    upstreamRequests.length = 0;
    const body = '{"title":"a slow but steady body"}';
    const socket = connect(gateway.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.write(
      `POST /integrations/external/leads HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${PLAIN}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
    );
    for (let i = 0; i < body.length; i += 6) {
      socket.write(body.slice(i, i + 6));
      await new Promise((r) => setTimeout(r, BODY_IDLE_MS / 3));
    }
    await closed;
    expect(text, text).to.match(/^HTTP\/1\.1 200 /);
    expect(upstreamRequests.map((r) => [r.aborted, r.bytes])).to.deep.equal([[false, body.length]]);
  });
});
