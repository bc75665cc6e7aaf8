import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import type { RunningGrpcServer } from '@svc/platform/grpc/server';
import { TEST_REDIS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import { type RunningGateway, startGateway } from '../src/gateway.js';
import { oneUpstream, startKeyResolver } from './support/fake-crm.js';

const PLAIN = `svc_${'f'.repeat(43)}`;
const LEADS = '/integrations/external/leads';

/** One raw HTTP/1.1 exchange written in a single write (headers and body in one packet), read until the server closes. */
function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
}

/** What the service receives from the gateway's own forward (decision 0243), and what the client gets back. */
describe('gateway forward: what the service receives and the client gets back', () => {
  let crmGrpc: RunningGrpcServer;
  let upstream: Server;
  let gateway: RunningGateway;
  const seen: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  /** 8 MiB, larger than any socket buffer: the answer must wait for the client. */
  const big = Buffer.alloc(8 * 1024 * 1024, 'abcdefghijklmnopqrstuvwxyz');
  /** 64 MiB, more than the four loopback socket buffers between the service and the client hold together. */
  const huge = { body: Buffer.alloc(64 * 1024 * 1024, 'zyxwvutsrqponmlkjihgfedcba'), sent: [] as { finished: boolean }[] };
  /** Requests to `/hang`, which answers its headers and a first chunk and then waits. */
  const hanging: { closedEarly: boolean }[] = [];

  before(async () => {
    crmGrpc = await startKeyResolver({ [PLAIN]: 'key-f' }, 'c-f', 'u-f');
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
        if (req.url?.startsWith(`${LEADS}/slow`)) return; // never answers
        if (req.url?.startsWith(`${LEADS}/big`)) {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': big.length });
          res.end(big);
          return;
        }
        if (req.url?.startsWith(`${LEADS}/huge`)) {
          const sent = { finished: false };
          huge.sent.push(sent);
          res.on('finish', () => (sent.finished = true));
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': huge.body.length });
          res.end(huge.body);
          return;
        }
        if (req.url?.startsWith(`${LEADS}/hang`)) {
          const seenHang = { closedEarly: false };
          hanging.push(seenHang);
          res.on('close', () => (seenHang.closedEarly = !res.writableFinished));
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('first part;');
          return;
        }
        res.statusMessage = 'Fine Thanks';
        res.writeHead(200, {
          'content-type': 'application/json',
          'x-route-template': `${LEADS}/{id}`,
          'x-service-own': 'kept',
          'set-cookie': ['a=1', 'b=2'],
          'keep-alive': 'timeout=5',
        });
        res.end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gateway = await startGateway({
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `f${randomBytes(4).toString('hex')}:`,
      ADMIN_TOKEN: 'admin-token-0123456789',
      IDENTITY_TOKEN_SECRET: 'i'.repeat(32),
      PORT: '0',
      METRICS_PORT: '0',
      LOG_LEVEL: 'silent',
      UPSTREAM_TIMEOUT_MS: '300',
      ...oneUpstream(up, crmGrpc.port),
    });
  });
  after(async () => {
    await gateway?.stop();
    await new Promise<void>((r) => upstream.close(() => r()));
    await crmGrpc.stop(100);
  });

  it('forwards a short body that arrived with the headers, whole, with the identity in place of the key and the forwarding headers', async () => {
    const body = '{"title":"one packet"}';
    const text = await rawExchange(
      gateway.port,
      `POST ${LEADS}?x=1 HTTP/1.1\r\nHost: api.example.test:8443\r\nAuthorization: Bearer ${PLAIN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Custom: yes\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(text.split('\r\n')[0]).to.equal('HTTP/1.1 200 Fine Thanks');
    const got = seen.at(-1);
    expect(got).to.include({ method: 'POST', url: `${LEADS}?x=1`, body });
    expect(got?.headers.authorization).to.equal(undefined);
    expect(got?.headers['x-svc-identity']).to.be.a('string').and.not.equal('');
    expect(got?.headers).to.include({
      host: 'api.example.test:8443',
      'x-custom': 'yes',
      'content-type': 'application/json',
      'x-forwarded-port': '8443',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'api.example.test:8443',
    });
    expect(got?.headers['x-forwarded-for']).to.match(/127\.0\.0\.1/);
  });

  it("keeps the client's own forwarding headers, and answers with the service's headers less the hop-by-hop ones and the route template", async () => {
    const res = await fetch(`${gateway.url}${LEADS}/1`, {
      headers: { authorization: `Bearer ${PLAIN}`, 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' },
    });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ ok: true });
    expect(seen.at(-1)?.headers).to.include({ 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' });
    expect(res.headers.get('x-service-own')).to.equal('kept');
    expect(res.headers.getSetCookie()).to.deep.equal(['a=1', 'b=2']);
    expect(res.headers.get('x-route-template')).to.equal(null);
    expect(res.headers.get('keep-alive')).to.not.equal('timeout=5');
    expect(res.headers.get('ratelimit-limit')).to.be.a('string');
    expect(res.headers.get('x-request-id')).to.be.a('string');
  });

  it('forwards a read without the hop-by-hop headers and answers with the status text, framed for the client', async () => {
    const text = await rawExchange(
      gateway.port,
      `GET ${LEADS}/7 HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer ${PLAIN}\r\n` +
        'TE: trailers\r\nKeep-Alive: timeout=9\r\nProxy-Connection: keep-alive\r\nX-Custom: read\r\nConnection: close\r\n\r\n',
    );
    const end = text.indexOf('\r\n\r\n');
    const [head, body] = [text.slice(0, end), text.slice(end + 4)];
    expect(head.split('\r\n')[0]).to.equal('HTTP/1.1 200 Fine Thanks');
    expect(head)
      .to.match(/^set-cookie: a=1$/im)
      .and.match(/^set-cookie: b=2$/im);
    // The service answered chunked; so does the gateway, in its own chunks.
    expect(head).to.match(/^transfer-encoding: chunked$/im);
    expect(body).to.equal('b\r\n{"ok":true}\r\n0\r\n\r\n');
    const got = seen.at(-1);
    expect(got).to.include({ method: 'GET', url: `${LEADS}/7` });
    expect(got?.headers).to.include({ host: 'api.example.test', 'x-custom': 'read', 'x-forwarded-port': '80' });
    for (const name of ['te', 'keep-alive', 'proxy-connection', 'authorization']) expect(got?.headers, name).to.not.have.property(name);
    expect(got?.headers.connection).to.not.equal('close');
  });

  it('answers a read larger than the sockets hold whole, waiting for a client that reads slowly', async () => {
    const res = await fetch(`${gateway.url}${LEADS}/big`, { headers: { authorization: `Bearer ${PLAIN}` } });
    expect(res.status).to.equal(200);
    const reader = res.body!.getReader();
    const parts: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      // A client slower than the service: the gateway must pause the service's connection, not buffer or drop.
      if (parts.length % 16 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    const got = Buffer.concat(parts);
    expect(got.length).to.equal(big.length);
    expect(got.equals(big)).to.equal(true);
  });

  it('holds the service back while the client reads nothing, instead of buffering the answer, and then answers it whole', async () => {
    const socket = connect(Number(new URL(gateway.url).port), '127.0.0.1');
    socket.pause();
    socket.write(`GET ${LEADS}/huge HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${PLAIN}\r\nConnection: close\r\n\r\n`);
    const deadline = Date.now() + 5000;
    while (huge.sent.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(huge.sent, 'the request reached the service').to.have.length(1);
    // The sockets' buffers fill within milliseconds; a gateway that kept reading would have taken the 64 MiB by now.
    // Shorter than the test gateway's UPSTREAM_TIMEOUT_MS (300), which ends a read the service stopped sending.
    await new Promise((r) => setTimeout(r, 150));
    expect(huge.sent[0]!.finished, 'the service could write the whole answer to a client that reads nothing').to.equal(false);
    const parts: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
      socket.on('data', (d: Buffer) => parts.push(d));
      socket.on('error', reject);
      socket.on('close', () => resolve());
      socket.resume();
    });
    const all = Buffer.concat(parts);
    const headEnd = all.indexOf('\r\n\r\n');
    expect(all.subarray(0, headEnd).toString('latin1').split('\r\n')[0]).to.equal('HTTP/1.1 200 OK');
    const body = all.subarray(headEnd + 4);
    expect(body.length).to.equal(huge.body.length);
    expect(body.equals(huge.body)).to.equal(true);
    expect(huge.sent[0]!.finished).to.equal(true);
  });

  it('drops the request to the service when the client goes away in the middle of a read', async () => {
    const controller = new AbortController();
    const res = await fetch(`${gateway.url}${LEADS}/hang`, { headers: { authorization: `Bearer ${PLAIN}` }, signal: controller.signal });
    expect(res.status).to.equal(200);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).to.equal('first part;');
    controller.abort();
    const deadline = Date.now() + 5000;
    while (!hanging.at(-1)?.closedEarly && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(hanging.at(-1)?.closedEarly).to.equal(true);
  });

  it('sends DELETE without a body with content-length 0', async () => {
    const res = await fetch(`${gateway.url}${LEADS}/1`, { method: 'DELETE', headers: { authorization: `Bearer ${PLAIN}` } });
    await res.arrayBuffer();
    expect(seen.at(-1)).to.include({ method: 'DELETE', body: '' });
    expect(seen.at(-1)?.headers['content-length']).to.equal('0');
  });

  it('answers 503 with the error body when the service does not answer within UPSTREAM_TIMEOUT_MS', async () => {
    const started = Date.now();
    const res = await fetch(`${gateway.url}${LEADS}/slow`, { headers: { authorization: `Bearer ${PLAIN}` } });
    expect(res.status).to.equal(503);
    expect(await res.json()).to.include({ statusCode: 503, message: 'The crm service is unavailable' });
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    expect(Date.now() - started).to.be.within(250, 5000);
  });
});
