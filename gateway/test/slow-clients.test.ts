import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { RunningGrpcServer } from '@svc/platform/grpc/server';
import { eventually, TEST_REDIS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import { type RunningGateway, startGateway } from '../src/gateway.js';
import { oneUpstream, startKeyResolver } from './support/fake-crm.js';

const KEY_A = `svc_${'a'.repeat(43)}`;
const KEY_B = `svc_${'b'.repeat(43)}`;
const MAX_IN_FLIGHT = 6;
const SOCKETS = 4;
const MIN_RATE = 200;
const WINDOW_MS = 500;
const BODY_TIMEOUT_MS = 3000;
const HEADERS_TIMEOUT_MS = 1000;

/** A raw HTTP/1.1 request the test writes piece by piece; `answer` resolves with everything the gateway sent once it closed. */
function rawRequest(port: number, head: string): { socket: Socket; text: () => string; answer: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  socket.write(head);
  let text = '';
  socket.on('data', (d) => (text += d.toString()));
  socket.on('error', () => undefined);
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  return { socket, text: () => text, answer };
}

/** Writes `body` a few bytes at a time, every `everyMs`, until it is all sent or the socket closed. */
async function trickle(socket: Socket, body: string, bytes: number, everyMs: number): Promise<void> {
  for (let i = 0; i < body.length && !socket.destroyed; i += bytes) {
    socket.write(body.slice(i, i + bytes));
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const post = (key: string, length: number) =>
  `POST /integrations/external/leads HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\n` +
  `content-length: ${length}\r\n\r\n`;

/**
 * What one slow client may hold at the gateway (issue 23 item 1, decision 0151), against a service on loopback that
 * counts the connections and requests it is given, through a pool of a few connections.
 */
describe('gateway: slow clients cannot starve fast ones', () => {
  let crmGrpc: RunningGrpcServer;
  let upstream: Server;
  let connections = 0;
  const seen: { method: string; url: string; req: IncomingMessage }[] = [];
  let gateway: RunningGateway;
  const open: Socket[] = [];

  before(async () => {
    crmGrpc = await startKeyResolver({ [KEY_A]: 'key-a', [KEY_B]: 'key-b' });
    upstream = createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', req });
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    upstream.on('connection', () => connections++);
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gateway = await startGateway({
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `g${randomBytes(4).toString('hex')}:`,
      ADMIN_TOKEN: 'admin-token-0123456789',
      IDENTITY_TOKEN_SECRET: 'i'.repeat(32),
      PORT: '0',
      LOG_LEVEL: 'silent',
      ...oneUpstream(up, crmGrpc.port),
      UPSTREAM_MAX_SOCKETS: String(SOCKETS),
      KEY_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
      BODY_MIN_BYTES_PER_SECOND: String(MIN_RATE),
      BODY_RATE_WINDOW_MS: String(WINDOW_MS),
      BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      BODY_IDLE_TIMEOUT_MS: '10000',
    });
  });
  afterEach(() => {
    for (const s of open.splice(0)) s.destroy();
    seen.length = 0;
  });
  after(async () => {
    await gateway?.stop();
    await new Promise<void>((r) => upstream.close(() => r()));
    await crmGrpc.stop(100);
  });

  const get = (key: string) =>
    fetch(`${gateway.url}/integrations/external/leads`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => ({
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: await r.json(),
    }));

  it('spends no service connection on a short body that has not arrived: fast GETs of this key and another go through a full pool', async () => {
    // More slow bodies than the pool has connections, each sent fast enough not to be cut while the test runs.
    const body = JSON.stringify({ title: 'x'.repeat(20_000) });
    const slow = Array.from({ length: MAX_IN_FLIGHT - 1 }, () => rawRequest(gateway.port, post(KEY_A, body.length)));
    open.push(...slow.map((s) => s.socket));
    for (const s of slow) void trickle(s.socket, body, 200, 100);
    await eventually(() => expect(slow.every((s) => s.socket.bytesWritten > 300)).to.equal(true));
    const before = connections;

    expect((await get(KEY_B)).status, 'another key').to.equal(200);
    expect((await get(KEY_A)).status, 'the same key, within its cap').to.equal(200);
    expect(seen.map((r) => r.method)).to.deep.equal(['GET', 'GET']);
    expect(connections - before, 'at most one new connection for the GETs').to.be.at.most(1);
    expect(slow.map((s) => s.text())).to.deep.equal(slow.map(() => ''));
  });

  it(`answers 429 with the error body to a key with ${MAX_IN_FLIGHT} requests in flight; other keys go on, and the key again once they end`, async () => {
    const body = JSON.stringify({ title: 'y'.repeat(20_000) });
    const slow = Array.from({ length: MAX_IN_FLIGHT }, () => rawRequest(gateway.port, post(KEY_A, body.length)));
    open.push(...slow.map((s) => s.socket));
    for (const s of slow) void trickle(s.socket, body, 200, 100);
    await eventually(async () => expect((await get(KEY_A)).status).to.equal(429));

    const refused = await get(KEY_A);
    expect(refused.status).to.equal(429);
    expect(refused.body).to.deep.equal({
      statusCode: 429,
      message: `Too many concurrent requests for this key: at most ${MAX_IN_FLIGHT} at once`,
      error: 'Too Many Requests',
    });
    expect(refused.retryAfter).to.equal('1');
    expect((await get(KEY_B)).status, 'another key').to.equal(200);

    for (const s of slow) s.socket.destroy();
    await eventually(async () => expect((await get(KEY_A)).status).to.equal(200));
  });

  it(`cuts a body slower than ${MIN_RATE} bytes per second with 408 and a clear message; the service saw no connection for it`, async () => {
    const before = connections;
    const body = JSON.stringify({ title: 'z'.repeat(200) });
    const slow = rawRequest(gateway.port, post(KEY_A, body.length));
    open.push(slow.socket);
    void trickle(slow.socket, body, 1, 50);
    const text = await slow.answer;
    expect(text).to.match(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(/\{.*\}/s.exec(text)?.[0] ?? '')).to.deep.equal({
      statusCode: 408,
      message: `body: slower than ${MIN_RATE} bytes per second`,
      error: 'Request Timeout',
    });
    expect(seen).to.deep.equal([]);
    expect(connections).to.equal(before);
  });

  it(`cuts a body that keeps the minimum rate but is not complete within ${BODY_TIMEOUT_MS} ms`, async () => {
    const body = JSON.stringify({ title: 'w'.repeat(40_000) });
    const slow = rawRequest(gateway.port, post(KEY_A, body.length));
    open.push(slow.socket);
    void trickle(slow.socket, body, 200, 100);
    const text = await slow.answer;
    expect(text).to.match(/^HTTP\/1\.1 408 /);
    expect(text).to.contain(`"message":"body: not complete within ${BODY_TIMEOUT_MS} ms"`);
    expect(seen).to.deep.equal([]);
  });

  it('streams a long body to the service as it arrives (an upload is not held back)', async () => {
    const chunk = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
    const upload = rawRequest(
      gateway.port,
      'POST /integrations/external/files HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ' +
        `${KEY_B}\r\ncontent-type: application/octet-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`,
    );
    open.push(upload.socket);
    upload.socket.write(chunk('p'.repeat(1000)));
    // The service has the request and its first bytes while the client has not sent the rest.
    const got = await eventually(() => seen.find((r) => r.method === 'POST'));
    expect(got.url).to.equal('/integrations/external/files');
    upload.socket.write(chunk('q'.repeat(1000)) + chunk(''));
    expect(await upload.answer).to.match(/^HTTP\/1\.1 200 /);
  });

  it('answers 408 with the error body to headers that do not arrive in time', async () => {
    const slow = rawRequest(gateway.port, 'GET /integrations/external/leads HTTP/1.1\r\nhost: x\r\n');
    open.push(slow.socket);
    const text = await slow.answer;
    expect(text).to.match(/^HTTP\/1\.1 408 /);
    expect(text).to.contain('"statusCode":408');
  });
});
