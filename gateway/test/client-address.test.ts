import { randomBytes } from 'node:crypto';
import http, { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { ConfigError, loadConfig } from '@svc/platform/config';
import { eventually, TEST_REDIS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import { clientAddressOf } from '../src/client-address.js';
import { gatewayConfigSchema } from '../src/config.js';
import { type RunningGateway, startGateway } from '../src/gateway.js';

const PER_ADDRESS = 2;

/** A GET sent from `localAddress` (another loopback address is another peer to the gateway), with `headers`. */
function getFrom(localAddress: string, url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { localAddress, agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

const fakeReq = (remoteAddress: string, headers: http.IncomingHttpHeaders) =>
  ({ socket: { remoteAddress }, connection: { remoteAddress }, headers }) as unknown as http.IncomingMessage;

/** Client addresses behind proxies (issue 19 item 2, decision 0152): the per-address limits and the access log. */
describe('gateway: client addresses through trusted proxies', () => {
  let upstream: Server;
  let gateway: RunningGateway;
  const lines: Record<string, unknown>[] = [];
  const log = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });

  before(async () => {
    // The files and crm services of the public routes: every request they get is answered 200.
    upstream = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const up = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gateway = await startGateway(
      {
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: `g${randomBytes(4).toString('hex')}:`,
        ADMIN_TOKEN: 'admin-token-0123456789',
        IDENTITY_TOKEN_SECRET: 'i'.repeat(32),
        PORT: '0',
        HOST: '0.0.0.0',
        LOG_LEVEL: 'info',
        CRM_URL: up,
        TASKS_URL: up,
        CHAT_URL: up,
        FILES_URL: up,
        WEBHOOKS_URL: up,
        CRM_GRPC_URL: '127.0.0.1:1',
        // 127.0.0.2 plays the ingress; 127.0.0.1 is a client reaching the gateway directly.
        TRUSTED_PROXIES: '127.0.0.2/32, 10.0.0.0/8',
        PUBLIC_FILES_RATE_LIMIT_PER_MINUTE: String(PER_ADDRESS),
        PUBLIC_RATE_LIMIT_PER_MINUTE: String(PER_ADDRESS),
      },
      log,
    );
  });
  after(async () => {
    await gateway?.stop();
    await new Promise<void>((r) => upstream.close(() => r()));
  });

  const files = () => `http://127.0.0.1:${gateway.port}/public/files/f-${randomBytes(4).toString('hex')}?expires=1&signature=x`;
  const form = () => `http://127.0.0.1:${gateway.port}/public/satisfaction/t${randomBytes(4).toString('hex')}`;

  for (const [name, url] of [
    ['signed downloads', files],
    ['the satisfaction form', form],
  ] as const) {
    it(`${name}: behind a trusted proxy each forwarded client has its own limit; a client cannot escape it by prepending addresses`, async () => {
      const a = '198.51.100.1';
      for (let i = 0; i < PER_ADDRESS; i++)
        expect(await getFrom('127.0.0.2', url(), { 'x-forwarded-for': a }), `request ${i + 1}`).to.equal(200);
      expect(await getFrom('127.0.0.2', url(), { 'x-forwarded-for': a })).to.equal(429);
      expect(
        await getFrom('127.0.0.2', url(), { 'x-forwarded-for': `203.0.113.50, ${a}` }),
        'a spoofed entry left of the proxy’s',
      ).to.equal(429);
      expect(await getFrom('127.0.0.2', url(), { 'x-forwarded-for': '198.51.100.2' }), 'another client behind the proxy').to.equal(200);
      // Proxies of the list in a row (the ingress behind a load balancer in 10/8) are skipped too.
      expect(await getFrom('127.0.0.2', url(), { 'x-forwarded-for': `${a}, 10.1.2.3` })).to.equal(429);
    });

    it(`${name}: an X-Forwarded-For from a peer that is not a trusted proxy changes nothing`, async () => {
      const peer = name === 'signed downloads' ? '127.0.0.3' : '127.0.0.4';
      for (let i = 0; i < PER_ADDRESS; i++) expect(await getFrom(peer, url(), { 'x-forwarded-for': `192.0.2.${i + 1}` })).to.equal(200);
      expect(await getFrom(peer, url(), { 'x-forwarded-for': '192.0.2.99' })).to.equal(429);
      expect(await getFrom(peer, url(), { forwarded: 'for=192.0.2.98' })).to.equal(429);
    });
  }

  it('writes the client address on the access log line: the forwarded one through a trusted proxy, the peer otherwise', async () => {
    await getFrom('127.0.0.2', files(), { 'x-forwarded-for': '198.51.100.7', 'x-request-id': 'rid-proxied' });
    await getFrom('127.0.0.5', files(), { 'x-forwarded-for': '198.51.100.8', 'x-request-id': 'rid-direct' });
    const proxied = await eventually(() => lines.find((l) => l.msg === 'request' && l.request_id === 'rid-proxied'));
    const direct = await eventually(() => lines.find((l) => l.msg === 'request' && l.request_id === 'rid-direct'));
    expect(proxied.client_address).to.equal('198.51.100.7');
    expect(direct.client_address).to.equal('127.0.0.5');
  });

  it('reads RFC 7239 Forwarded instead when the proxies write that header', () => {
    const of = clientAddressOf(['10.0.0.0/8'], 'forwarded');
    expect(of(fakeReq('10.0.0.1', { forwarded: 'for=198.51.100.9;proto=https' }))).to.equal('198.51.100.9');
    expect(of(fakeReq('10.0.0.1', { forwarded: 'for="[2001:db8::17]:4711", for=10.2.3.4:80' }))).to.equal('2001:db8::17');
    expect(of(fakeReq('10.0.0.1', { forwarded: 'for=192.0.2.1, for=198.51.100.9' })), 'the rightmost untrusted').to.equal('198.51.100.9');
    expect(of(fakeReq('10.0.0.1', { 'x-forwarded-for': '198.51.100.9' })), 'X-Forwarded-For not read').to.equal('10.0.0.1');
    expect(of(fakeReq('192.0.2.7', { forwarded: 'for=198.51.100.9' })), 'untrusted peer').to.equal('192.0.2.7');
    expect(clientAddressOf([], 'x-forwarded-for')(fakeReq('192.0.2.7', { 'x-forwarded-for': '198.51.100.9' })), 'none trusted').to.equal(
      '192.0.2.7',
    );
  });

  it('refuses a TRUSTED_PROXIES entry that is not an address or a CIDR, naming the variable', () => {
    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      ADMIN_TOKEN: 'a'.repeat(16),
      IDENTITY_TOKEN_SECRET: 's'.repeat(32),
      CRM_URL: 'http://127.0.0.1:8081',
      TASKS_URL: 'http://127.0.0.1:8082',
      CHAT_URL: 'http://127.0.0.1:8083',
      FILES_URL: 'http://127.0.0.1:8084',
      WEBHOOKS_URL: 'http://127.0.0.1:8085',
      CRM_GRPC_URL: '127.0.0.1:9081',
    };
    expect(loadConfig(gatewayConfigSchema, env).TRUSTED_PROXIES).to.deep.equal([]);
    expect(loadConfig(gatewayConfigSchema, { ...env, TRUSTED_PROXIES: '10.0.0.0/8,fd00::/8' }).TRUSTED_PROXIES).to.deep.equal([
      '10.0.0.0/8',
      'fd00::/8',
    ]);
    for (const bad of ['ingress', '10.0.0.0/33', '300.1.1.1'])
      expect(() => loadConfig(gatewayConfigSchema, { ...env, TRUSTED_PROXIES: bad }), bad).to.throw(ConfigError, /TRUSTED_PROXIES/);
  });
});
