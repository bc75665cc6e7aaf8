import type { RunningService } from '@svc/platform/service';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import type { Delivery } from '../src/deliveries/delivery.entity.js';
import { DESTINATION_NOT_ALLOWED, refusedLiteral, refusedRange, specialRange } from '../src/deliveries/destination.js';
import { WebhookSender } from '../src/deliveries/sender.js';
import { CLOUD_METADATA } from '../src/deliveries/special-addresses.js';
import { type Harness, Receiver, startHarness } from './harness.js';

const SPECIAL: Record<string, string> = {
  '127.0.0.1': 'loopback',
  '127.255.0.9': 'loopback',
  '10.1.2.3': 'private',
  '172.16.0.1': 'private',
  '172.31.255.254': 'private',
  '192.168.0.10': 'private',
  '169.254.10.1': 'link-local',
  '100.64.0.1': 'carrier-grade NAT',
  '100.127.255.255': 'carrier-grade NAT',
  '0.0.0.0': 'unspecified',
  '224.0.0.251': 'multicast',
  '239.255.255.250': 'multicast',
  '255.255.255.255': 'broadcast',
  '240.0.0.1': 'reserved',
  '192.0.2.1': 'documentation',
  '198.51.100.7': 'documentation',
  '198.18.0.1': 'benchmarking',
  '192.0.0.8': 'IPv4 dummy address',
  '192.0.0.170': 'NAT64/DNS64 discovery',
  '169.254.169.254': 'cloud metadata',
  '168.63.129.16': 'cloud metadata',
  '192.0.0.192': 'cloud metadata',
  '100.100.100.200': 'cloud metadata',
  '169.254.170.2': 'cloud metadata',
  '::': 'unspecified',
  '::1': 'loopback',
  'fc00::1': 'private',
  'fd12:3456::1': 'private',
  'fe80::1': 'link-local',
  'fe80::1%eth0': 'link-local',
  'febf:ffff::1': 'link-local',
  'ff02::1': 'multicast',
  '2001:db8::1': 'documentation',
  '3fff::1': 'documentation',
  '100::1': 'discard-only',
  '5f00::1': 'segment routing',
  '2001:2::1': 'benchmarking',
  '4000::1': 'reserved',
  'fd00:ec2::254': 'cloud metadata',
  'fd20:ce::254': 'cloud metadata',
  'fd00:c1::a9fe:a9fe': 'cloud metadata',
  '::ffff:127.0.0.1': 'loopback',
  '::ffff:a00:1': 'private',
  '64:ff9b::a9fe:a9fe': 'cloud metadata',
  '2002:c0a8:101::1': 'private',
  // Local-use NAT64 (64:ff9b:1::/48): not globally reachable, and the IPv4 inside it at every RFC 6052 position.
  '64:ff9b:1::808:808': 'local-use NAT64',
  '64:ff9b:1::a9fe:a9fe': 'cloud metadata',
  '64:ff9b:1:a9fe:a9:fe00::': 'cloud metadata',
  '64:ff9b:1:0:a9:fea9:fe00:0': 'cloud metadata',
  // IPv4-compatible (deprecated) and SIIT-translated forms.
  '::127.0.0.1': 'loopback',
  '::a9fe:a9fe': 'cloud metadata',
  '::808:808': 'reserved',
  '::ffff:0:7f00:1': 'loopback',
  '::ffff:0:a9fe:a9fe': 'cloud metadata',
  // Teredo: the server's address, and the client's stored inverted (this one is 192.0.2.45).
  '2001:0:4136:e378:8000:63bf:3fff:fdd2': 'documentation',
  '2001:0:a9fe:a9fe::1': 'cloud metadata',
  // ISATAP interface identifiers.
  'fe80::5efe:a9fe:a9fe': 'cloud metadata',
  '2001:4860::5efe:7f00:1': 'loopback',
};
const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '172.15.255.255',
  '172.32.0.1',
  '100.63.255.255',
  '100.128.0.0',
  '192.169.0.1',
  '169.255.0.1',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '2002:808:808::1',
  '64:ff9b::808:808',
  '2001:0:808:808::f7f7:f7f7',
  // Globally reachable entries of the IANA registries inside blocks that are not.
  '192.0.0.9',
  '192.31.196.1',
  '2001:1::1',
  '2001:3::1',
];
const METADATA = Object.keys(SPECIAL).filter((a) => SPECIAL[a] === 'cloud metadata');

/** An IPv4 address in every IPv6 form that carries it. */
function v6Forms(v4: string): string[] {
  const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
  const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
  const [hi, lo] = [hex(a, b), hex(c, d)];
  const inv = (x: number) => x ^ 0xff;
  return [
    `::ffff:${v4}`,
    `::ffff:${hi}:${lo}`,
    `::ffff:0:${hi}:${lo}`,
    `::${hi}:${lo}`,
    `64:ff9b::${hi}:${lo}`,
    `64:ff9b:1::${hi}:${lo}`,
    `64:ff9b:1:${hi}:${lo.padStart(4, '0').slice(0, 2)}:${lo.padStart(4, '0').slice(2)}00::`,
    `2002:${hi}:${lo}::1`,
    `2001:0:${hi}:${lo}::f7f7:f7f7`,
    `2001:0:4136:e378:8000:63bf:${hex(inv(a), inv(b))}:${hex(inv(c), inv(d))}`,
    `fe80::5efe:${hi}:${lo}`,
  ];
}

describe('webhook destinations: loopback, private, link-local and metadata addresses', () => {
  describe('address ranges', () => {
    it('names the range of every special-purpose address, IPv4-mapped, NAT64 and 6to4 forms included', () => {
      const named = Object.fromEntries(Object.keys(SPECIAL).map((a) => [a, specialRange(a)]));
      expect(named).to.deep.equal(SPECIAL);
    });

    it('finds public addresses in no range', () => {
      expect(PUBLIC.filter((a) => specialRange(a) !== null)).to.deep.equal([]);
    });

    it('refuses special addresses unless private networks are allowed, and cloud metadata always', () => {
      const refusedWhen = (allowPrivateNetworks: boolean) => Object.keys(SPECIAL).filter((a) => refusedRange(a, { allowPrivateNetworks }));
      expect(refusedWhen(false)).to.deep.equal(Object.keys(SPECIAL));
      expect(refusedWhen(true)).to.have.members(METADATA);
      expect(PUBLIC.filter((a) => refusedRange(a, { allowPrivateNetworks: false }))).to.deep.equal([]);
    });

    it('refuses every cloud metadata endpoint of the list always, in every IPv6 form that carries an IPv4 address', () => {
      const allow = { allowPrivateNetworks: true };
      const v4 = CLOUD_METADATA.map(([a]) => a).filter((a) => a.includes('.'));
      expect(v4).to.include.members(['169.254.169.254', '168.63.129.16', '192.0.0.192', '100.100.100.200']);
      expect(CLOUD_METADATA.map(([a]) => a)).to.include.members(['fd00:ec2::254', 'fd20:ce::254']);
      const passed = [...CLOUD_METADATA.map(([a]) => a), ...v4.flatMap(v6Forms)].filter((a) => refusedRange(a, allow) !== 'cloud metadata');
      expect(passed).to.deep.equal([]);
      // The same forms of a public address stay public.
      // The same forms of a public address: public, but for those whose IPv6 block is not (deprecated IPv4-compatible,
      // local-use NAT64, link-local ISATAP).
      const forms = v6Forms('8.8.8.8');
      expect(forms.filter((a) => specialRange(a) !== null)).to.deep.equal([forms[3], forms[5], forms[6], forms[10]]);
    });

    it('checks IP literals in URLs in every spelling the URL parser accepts, and leaves host names to send time', () => {
      const deny = { allowPrivateNetworks: false };
      for (const url of [
        'http://127.0.0.1/x',
        'http://2130706433/x',
        'http://0x7f.1/x',
        'http://127.1:8080/x',
        'https://[::ffff:7f00:1]/x',
      ])
        expect(refusedLiteral(url, deny), url).to.match(/ is loopback$/);
      expect(refusedLiteral('http://[fd00:ec2::254]/latest', deny)).to.equal('fd00:ec2::254 is cloud metadata');
      expect(refusedLiteral('http://localhost:8080/x', deny)).to.equal(null);
      expect(refusedLiteral('https://hooks.example.com/in', deny)).to.equal(null);
      expect(refusedLiteral('https://8.8.8.8/in', deny)).to.equal(null);
    });
  });

  describe('one attempt against a receiver on loopback', () => {
    let receiver: Receiver;
    const refusing = new WebhookSender(undefined, { allowPrivateNetworks: false });
    const allowing = new WebhookSender(undefined, { allowPrivateNetworks: true });
    before(async () => {
      receiver = await Receiver.start();
    });
    after(async () => {
      await Promise.all([refusing.close(), allowing.close()]);
      await receiver.close();
    });

    const delivery = (url: string): Delivery =>
      ({
        id: 'd1',
        companyId: 'c1',
        subscriptionId: 's1',
        eventId: 'evt-1',
        eventKey: 'lead.created',
        url,
        config: { secret: 'the-secret-of-the-subscription', headers: {}, auth: null },
        body: JSON.stringify({ event_id: 'evt-1', event_key: 'lead.created', payload: {} }),
        status: 'pending',
        attemptCount: 0,
        maxRetries: 5,
      }) as Delivery;
    const port = () => new URL(receiver.url).port;

    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '2130706433', 'localhost']) {
      it(`refuses http://${host}:<port> as a failed attempt, without a request reaching the receiver`, async () => {
        const before = receiver.received.length;
        const result = await refusing.attempt(delivery(`http://${host}:${port()}/hook`));
        expect(result).to.include({ outcome: 'failed', statusCode: null, error: DESTINATION_NOT_ALLOWED });
        expect(receiver.received.length).to.equal(before);
      });
    }

    it('resolves a host name at connect time: https://localhost is refused before any TLS handshake', async () => {
      const result = await refusing.attempt(delivery(`https://localhost:${port()}/hook`));
      expect(result).to.include({ outcome: 'failed', error: DESTINATION_NOT_ALLOWED });
    });

    it('reaches the same receiver by the same names when private networks are allowed', async () => {
      for (const host of ['127.0.0.1', 'localhost']) {
        const result = await allowing.attempt(delivery(`http://${host}:${port()}/hook`));
        expect(result, host).to.include({ outcome: 'succeeded', statusCode: 200 });
      }
    });
  });

  describe('the service with WEBHOOK_ALLOW_PRIVATE_NETWORKS unset', () => {
    let h: Harness;
    let svc: RunningService;
    let companyId: string;
    let receiver: Receiver;
    const path = () => `/companies/${companyId}/webhooks`;
    before(async () => {
      h = await startHarness();
      svc = await h.webhooks({});
      companyId = await h.company();
      receiver = await Receiver.start();
    });
    after(async () => {
      await receiver?.close();
      await h?.stop();
    });

    it('answers 400 naming url for an IP literal in a refused range, on create and on update', async () => {
      for (const url of [
        'http://127.0.0.1/x',
        'http://10.0.0.8/x',
        'http://172.20.1.1/x',
        'http://192.168.1.1/x',
        'http://169.254.169.254/latest/meta-data',
        'http://100.64.1.1/x',
        'http://0.0.0.0/x',
        'http://224.0.0.1/x',
        'http://[::1]/x',
        'http://[fd00:ec2::254]/x',
        'http://[fe80::1]/x',
        'http://2130706433/x',
      ]) {
        const res = await h.admin(svc, 'POST', path(), { url, events: ['lead.created'] });
        expect(res.status, url).to.equal(400);
        expect(res.body.message, url).to.match(/^url: destination address not allowed/);
      }
      const ok = await h.admin(svc, 'POST', path(), { url: 'https://93.184.215.14/in', events: ['lead.created'], active: false });
      expect(ok.status).to.equal(201);
      const upd = await h.admin(svc, 'PATCH', `${path()}/${ok.body.id}`, { url: 'http://[::ffff:192.168.0.1]/x' });
      expect(upd.status).to.equal(400);
      expect(upd.body.message).to.contain('url');
      expect((await h.admin(svc, 'GET', `${path()}/${ok.body.id}`)).body.url).to.equal('https://93.184.215.14/in');
    });

    it('accepts a host name, then refuses its delivery when it resolves to loopback: one failed attempt, no retry', async () => {
      const url = `http://localhost:${new URL(receiver.url).port}/hook`;
      const sub = await h.admin(svc, 'POST', path(), { url, events: ['lead.created'], max_retries: 5 });
      expect(sub.status).to.equal(201);
      const [eventId] = await h.publish(svc, companyId, [{ key: 'lead.created', payload: { lead: { id: 'l1' } } }]);
      const delivery = await eventually(async () => {
        const log = await h.admin(svc, 'GET', `${path()}/${sub.body.id}/deliveries`);
        return log.body.records.find((d: any) => d.event_id === eventId && d.status !== 'pending');
      }, 15_000);
      expect(delivery.status).to.equal('failed');
      expect(delivery.next_attempt_at).to.equal(null);
      expect(delivery.attempts).to.have.length(1);
      expect(delivery.attempts[0]).to.include({ status_code: null, error: DESTINATION_NOT_ALLOWED });
      expect(receiver.received).to.have.length(0);
    });

    it('refuses cloud metadata literals even on an instance that allows private networks', async () => {
      const allowing = await h.webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
      try {
        expect(
          (await h.admin(allowing, 'POST', path(), { url: 'http://127.0.0.1:9/x', events: ['lead.created'], active: false })).status,
        ).to.equal(201);
        for (const url of ['http://169.254.169.254/latest', 'http://[fd00:ec2::254]/latest'])
          expect((await h.admin(allowing, 'POST', path(), { url, events: ['lead.created'] })).status, url).to.equal(400);
      } finally {
        await allowing.stop();
      }
    });

    it('stops at start on a WEBHOOK_ALLOW_PRIVATE_NETWORKS that is not a yes or no', async () => {
      let error: Error | undefined;
      await h.webhooks({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'sometimes' }).catch((err: Error) => {
        error = err;
      });
      expect(error?.message).to.contain('WEBHOOK_ALLOW_PRIVATE_NETWORKS: must be true or false');
    });
  });
});
