import dns from 'node:dns/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant, type Tenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';
import { type World, world } from './support/world.js';

/**
 * Address tricks of the public SSRF lists (PayloadsAllTheThings "SSRF URL for ...", OWASP SSRF prevention cheat
 * sheet): decimal, octal, hexadecimal and shortened IPv4, trailing dots, percent-encoded and full-width digits,
 * credentials before the host, IPv4-mapped, NAT64 and 6to4 IPv6, cloud metadata. The URL parser turns each into
 * the address a connection would reach; every one is a 400 on `url` when the subscription is created.
 */
const LITERAL_TRICKS = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://0/',
  'http://0.0.0.0./',
  'http://2130706433/',
  'http://017700000001/',
  'http://0x7f000001/',
  'http://0x7f.0x0.0x0.0x1/',
  'http://0177.0.0.1/',
  'http://127.000.000.001/',
  'http://127.0.0.1./',
  'http://%31%32%37.0.0.1/',
  'http://①②⑦.⓪.⓪.①/',
  'http://evil.example@127.0.0.1/',
  'http://127.0.0.1:80\\@evil.example/',
  'http://[::1]/',
  'http://[::]/',
  'http://[0:0:0:0:0:ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[2002:7f00:1::]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/',
  'http://[fd00:ec2::254]/',
  'http://100.100.100.200/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.0.1/',
  'http://100.64.0.1/',
  'http://[fc00::1]/',
  'http://[fe80::1]/',
  'http://224.0.0.1/',
  // Issue 23 item 5: metadata endpoints of Azure, Oracle and GCP, the local-use NAT64 range, IPv4-compatible and
  // SIIT-translated forms.
  'http://168.63.129.16/',
  'http://192.0.0.192/latest/meta-data/',
  'http://[fd20:ce::254]/',
  'http://[64:ff9b:1::a9fe:a9fe]/',
  'http://[64:ff9b:1::7f00:1]/',
  'http://[64:ff9b:1:7f00:0:100::]/',
  'http://[::127.0.0.1]/',
  'http://[::a9fe:a9fe]/',
  'http://[::ffff:0:127.0.0.1]/',
  'http://[::ffff:0:a9fe:a9fe]/',
  'http://[fd00:c1::a9fe:a9fe]/',
  'http://[2001:0:a9fe:a9fe::1]/',
  'http://192.0.2.1/',
  'http://[2001:db8::1]/',
];

/** Cloud metadata endpoints: refused also where private networks are allowed (the suite's setting). */
const METADATA_TRICKS = [
  'http://169.254.169.254/latest/meta-data/',
  'http://168.63.129.16/',
  'http://192.0.0.192/latest/meta-data/',
  'http://100.100.100.200/latest/meta-data/',
  'http://[fd00:ec2::254]/',
  'http://[fd20:ce::254]/',
  'http://[64:ff9b:1::a9fe:a9fe]/',
  'http://[::a9fe:a9fe]/',
  'http://[::ffff:0:a9fe:a9fe]/',
  'http://[::ffff:a9fe:a9fe]/',
];

describe('reliability: SSRF, webhook destinations when private networks are not allowed', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let t: Tenant;
  let hits = 0;
  let target: http.Server;
  let port: number;
  const hooks = () => `/companies/${t.company.id}/webhooks`;

  before(async function () {
    this.timeout(120_000);
    stack = await startStack({ webhooks: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
    call = client(stack.gatewayUrl).call;
    t = await seedTenant(call, stack.adminToken);
    // What a request that got through would reach: every trick below names this port.
    target = http.createServer((_req, res) => {
      hits++;
      res.writeHead(200).end();
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    port = (target.address() as AddressInfo).port;
  });
  after(async () => {
    target?.close();
    await stack?.stop();
  });

  it(`refuses each of ${LITERAL_TRICKS.length} address tricks at creation and at update with 400 on url`, async () => {
    const admin = adminOf(call, stack.adminToken);
    const accepted: string[] = [];
    for (const trick of LITERAL_TRICKS) {
      const url = trick.replace(/\/$|\/(?=latest)/, `:${port}/`).replace(':80\\@', `:${port}\\@`);
      const res = await admin('POST', hooks(), { url, events: ['lead.created'] });
      if (res.status !== 400 || !/^url: /.test(res.body?.message)) accepted.push(`${url}: ${res.status} ${res.text}`);
    }
    expect(accepted).to.deep.equal([]);
    const ok = await admin('POST', hooks(), { url: 'https://hooks.example.test/in', events: ['lead.created'], active: false });
    expect(ok.status, ok.text).to.equal(201);
    for (const trick of ['http://0x7f.1/', 'http://[::ffff:a9fe:a9fe]/']) {
      const upd = await admin('PATCH', `${hooks()}/${ok.body.id}`, { url: trick });
      expect(upd.status, trick).to.equal(400);
      expect(upd.body.message).to.match(/^url: /);
    }
    expect((await admin('GET', `${hooks()}/${ok.body.id}`)).body.url).to.equal('https://hooks.example.test/in');
  });

  it('accepts host names that resolve to loopback, then refuses each delivery at send time without a request', async function () {
    this.timeout(60_000);
    const admin = adminOf(call, stack.adminToken);
    // Names that resolve to a special address on this machine without outside DNS: localhost in any letter case,
    // and the machine's own name (which /etc/hosts maps to a loopback or private address).
    const names: string[] = [];
    for (const name of ['localhost', 'LocalHost', os.hostname()]) {
      const resolved = await dns.lookup(name, { all: true }).catch(() => []);
      if (resolved.length > 0) names.push(name);
    }
    expect(names).to.include.members(['localhost', 'LocalHost']);
    const subs = [];
    for (const name of names) {
      const res = await admin('POST', hooks(), { url: `http://${name}:${port}/hook`, events: ['lead.created'], max_retries: 3 });
      expect(res.status, `${name}: ${res.text}`).to.equal(201);
      subs.push(res.body);
    }
    const lead = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'SSRF probe' } });
    expect(lead.status).to.equal(201);
    for (const sub of subs) {
      const delivery = await eventually(async () => {
        const log = await admin('GET', `${hooks()}/${sub.id}/deliveries`);
        return log.body.records.find((d: { status: string }) => d.status !== 'pending');
      }, 20_000);
      expect(delivery.status, sub.url).to.equal('failed');
      expect(delivery.attempts).to.have.length(1);
      expect(delivery.attempts[0]).to.include({ status_code: null, error: 'destination address not allowed' });
    }
    expect(hits, 'requests that reached the loopback target').to.equal(0);
  });
});

describe('reliability: SSRF, metadata and redirects (private networks allowed, as in the suite)', () => {
  let w: World;
  let redirector: http.Server;
  let reached = 0;
  let second: http.Server;
  before(async function () {
    this.timeout(180_000);
    w = await world();
    second = http.createServer((_req, res) => {
      reached++;
      res.writeHead(200).end();
    });
    await new Promise<void>((r) => second.listen(0, '127.0.0.1', r));
    const secondUrl = `http://127.0.0.1:${(second.address() as AddressInfo).port}/private`;
    // A receiver that answers every delivery with a redirect: to cloud metadata, or to another loopback server.
    redirector = http.createServer((req, res) => {
      req.resume();
      const location = req.url?.includes('metadata') ? 'http://169.254.169.254/latest/meta-data/' : secondUrl;
      res.writeHead(req.url?.includes('307') ? 307 : 302, { location }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  });
  after(() => {
    redirector?.close();
    second?.close();
  });

  it(`refuses each of ${METADATA_TRICKS.length} cloud metadata addresses with 400 on url, though private networks are allowed`, async () => {
    const accepted: string[] = [];
    for (const url of METADATA_TRICKS) {
      const res = await w.admin('POST', `/companies/${w.own.companyId}/webhooks`, { url, events: ['deal.created'], active: false });
      if (res.status !== 400 || !/^url: /.test(res.body?.message)) accepted.push(`${url}: ${res.status} ${res.text}`);
    }
    expect(accepted).to.deep.equal([]);
  });

  it('fails a delivery answered 302 or 307 without following it to metadata or another private address', async function () {
    this.timeout(60_000);
    const base = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    const subs = [];
    for (const path of ['/metadata', '/307', '/302']) {
      const res = await w.admin('POST', `/companies/${w.own.companyId}/webhooks`, {
        url: `${base}${path}`,
        events: ['deal.created'],
        max_retries: 0,
      });
      expect(res.status, res.text).to.equal(201);
      w.secrets.add(res.body.secret);
      subs.push(res.body);
    }
    const deal = await w.call('POST', '/integrations/external/deals', { token: w.own.key, body: { title: 'Redirect probe' } });
    expect(deal.status, deal.text).to.equal(201);
    for (const sub of subs) {
      const delivery = await eventually(async () => {
        const log = await w.admin('GET', `/companies/${w.own.companyId}/webhooks/${sub.id}/deliveries`);
        return log.body.records.find((d: { status: string }) => d.status !== 'pending');
      }, 20_000);
      expect(delivery.status, sub.url).to.equal('failed');
      expect(delivery.attempts[0].status_code, sub.url).to.be.oneOf([302, 307]);
    }
    expect(reached, 'requests that followed a redirect').to.equal(0);
    for (const sub of subs) await w.admin('DELETE', `/companies/${w.own.companyId}/webhooks/${sub.id}`);
  });
});
