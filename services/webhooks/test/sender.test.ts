import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import type { Delivery } from '../src/deliveries/delivery.entity.js';
import { buildHeaders, LEASE_LOST, nextWaitMs, RETRY_MAX_WAIT_MS, retrySchedule, WebhookSender } from '../src/deliveries/sender.js';
import { DEFAULT_MAX_RETRIES, MAX_RETRIES_LIMIT } from '../src/subscriptions/subscription.schema.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

describe('webhook sender: one attempt against a real receiver on loopback', () => {
  let server: http.Server;
  let url: string;
  let handler: Handler = (_req, res) => res.writeHead(200).end();
  let lastHeaders: http.IncomingHttpHeaders = {};
  let lastBody = '';
  const sender = new WebhookSender(undefined, { allowPrivateNetworks: true });

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        lastHeaders = req.headers;
        lastBody = Buffer.concat(chunks).toString('utf8');
        handler(req, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    await sender.close();
    server.close();
  });

  const delivery = (over: Partial<Delivery> = {}): Delivery =>
    ({
      id: 'd1',
      companyId: 'c1',
      subscriptionId: 's1',
      eventId: 'evt-1',
      eventKey: 'lead.created',
      url,
      config: { secret: 'the-secret-of-the-subscription', headers: {}, auth: null },
      body: JSON.stringify({ event_id: 'evt-1', event_key: 'lead.created', payload: { lead: { id: 'l1' } } }),
      status: 'pending',
      attemptCount: 0,
      maxRetries: 5,
      ...over,
    }) as Delivery;

  it('POSTs the exact body with the spec headers and a hex HMAC signature', async () => {
    handler = (_req, res) => res.writeHead(204).end();
    const d = delivery();
    const result = await sender.attempt(d);
    expect(result).to.include({ outcome: 'succeeded', statusCode: 204, error: null });
    expect(lastBody).to.equal(d.body);
    expect(lastHeaders).to.include({
      'content-type': 'application/json',
      'user-agent': 'svc-webhooks/1.0',
      'x-svc-event': 'lead.created',
      'x-svc-event-id': 'evt-1',
      'x-svc-signature': `sha256=${createHmac('sha256', 'the-secret-of-the-subscription').update(d.body).digest('hex')}`,
    });
  });

  it('adds custom headers and each auth kind, and the spec headers win on a repeated name', async () => {
    const base = delivery({
      config: {
        secret: 's'.repeat(20),
        headers: { 'X-Tenant': 'acme', 'User-Agent': 'spoof', 'X-SVC-EVENT': 'spoof' },
        auth: { type: 'basic', username: 'u', password: 'p' },
      },
    });
    const h = buildHeaders(base, base.body);
    expect(h['X-Tenant']).to.equal('acme');
    expect(h['user-agent']).to.equal('svc-webhooks/1.0');
    expect(h['x-svc-event']).to.equal('lead.created');
    expect(Object.keys(h).filter((k) => k.toLowerCase() === 'user-agent')).to.have.length(1);
    expect(h.authorization).to.equal(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect(
      buildHeaders(delivery({ config: { secret: 'x', headers: {}, auth: { type: 'bearer', token: 'tok' } } }), '{}').authorization,
    ).to.equal('Bearer tok');
    expect(
      buildHeaders(delivery({ config: { secret: 'x', headers: {}, auth: { type: 'api_key', header: 'X-Api-Key', value: 'k' } } }), '{}')[
        'X-Api-Key'
      ],
    ).to.equal('k');
    await sender.attempt(base);
    expect(lastHeaders['x-tenant']).to.equal('acme');
    expect(lastHeaders['user-agent']).to.equal('svc-webhooks/1.0');
  });

  for (const status of [408, 409, 425, 429, 500, 503]) {
    it(`retries on ${status}`, async () => {
      handler = (_req, res) => res.writeHead(status).end();
      expect((await sender.attempt(delivery())).outcome).to.equal('retry');
    });
  }
  for (const status of [301, 400, 401, 404, 410, 422]) {
    it(`fails at once on ${status}`, async () => {
      handler = (_req, res) => res.writeHead(status, status === 301 ? { location: '/elsewhere' } : {}).end();
      expect((await sender.attempt(delivery())).outcome).to.equal('failed');
    });
  }

  it('retries a network failure', async () => {
    const result = await sender.attempt(delivery({ url: 'http://127.0.0.1:1/closed' }));
    expect(result.outcome).to.equal('retry');
    expect(result.statusCode).to.equal(null);
    expect(result.error).to.be.a('string');
  });

  it('fails a 2xx whose body is larger than 1 MB, reading no further than the limit', async () => {
    let written = 0;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 97);
      const pump = () => {
        while (written < 50 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => undefined);
      pump();
    };
    const result = await sender.attempt(delivery());
    expect(result).to.include({ outcome: 'failed', statusCode: 200 });
    expect(result.error).to.contain('1 MB');
    expect(written).to.be.below(50 * 1024 * 1024);
  });

  it('accepts a 2xx body of exactly 1 MB', async () => {
    handler = (_req, res) => res.writeHead(200).end(Buffer.alloc(1024 * 1024, 98));
    expect((await sender.attempt(delivery())).outcome).to.equal('succeeded');
  });

  it("reads the receiver's Retry-After in seconds or as a date", async () => {
    handler = (_req, res) => res.writeHead(429, { 'retry-after': '120' }).end();
    expect((await sender.attempt(delivery())).retryAfterSeconds).to.equal(120);
    handler = (_req, res) => res.writeHead(503, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }).end();
    expect((await sender.attempt(delivery())).retryAfterSeconds).to.be.within(58, 61);
  });

  it('ends an attempt at its time limit, also while the body trickles in, as a timeout to retry', async () => {
    const short = new WebhookSender(undefined, { allowPrivateNetworks: true }, 600);
    try {
      // Headers at once, then a byte every 100 ms: no idle gap reaches the body timeout, the attempt's limit ends it.
      handler = (_req, res) => {
        res.writeHead(200, { 'content-length': '100' });
        const timer = setInterval(() => res.write('x'), 100);
        res.on('close', () => clearInterval(timer));
      };
      const trickle = await short.attempt(delivery());
      expect(trickle).to.include({ outcome: 'retry', error: 'timeout', statusCode: null });
      expect(trickle.durationMs).to.be.within(600, 1100);
      // No answer at all.
      handler = () => undefined;
      const silent = await short.attempt(delivery());
      expect(silent).to.include({ outcome: 'retry', error: 'timeout' });
      expect(silent.durationMs).to.be.within(550, 1100);
    } finally {
      await short.close();
    }
  });
});

describe('webhook sender: the lease is checked when the request is written', () => {
  let server: http.Server;
  let url: string;
  /** Event ids of the requests that reached the receiver, and the answers it holds back. */
  const arrived: string[] = [];
  let holding: http.ServerResponse[] = [];
  let hold = true;
  const sender = new WebhookSender(undefined, { allowPrivateNetworks: true });

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        arrived.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).event_id);
        if (hold) holding.push(res);
        else res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(async () => {
    await sender.close();
    server.closeAllConnections();
    server.close();
  });

  const delivery = (eventId: string): Delivery =>
    ({
      id: eventId,
      eventId,
      eventKey: 'lead.created',
      url,
      config: { secret: 'the-secret-of-the-subscription', headers: {}, auth: null },
      body: JSON.stringify({ event_id: eventId, event_key: 'lead.created', payload: {} }),
    }) as Delivery;
  const lease = (held: () => boolean) => ({ signal: new AbortController().signal, held });

  it('does not send an attempt whose lease is already lost, and says so', async () => {
    hold = false;
    const result = await sender.attempt(
      delivery('lost-at-once'),
      lease(() => false),
    );
    expect(result).to.include({ statusCode: null, error: LEASE_LOST });
    expect(arrived).to.not.include('lost-at-once');
  });

  it('does not send an attempt queued behind busy connections once its lease is lost meanwhile', async function () {
    this.timeout(20_000);
    hold = true;
    // Every connection to the origin busy with an answer the receiver holds back; one more attempt waits its turn.
    const busy = Array.from({ length: 64 }, (_, i) =>
      sender.attempt(
        delivery(`busy-${i}`),
        lease(() => true),
      ),
    );
    await eventually(() => holding.length === 64, 10_000);
    let held = true;
    const queued = sender.attempt(
      delivery('queued'),
      lease(() => held),
    );
    // The lease runs out while it waits (as in a process stopped past it), then the connections free up.
    held = false;
    hold = false;
    for (const res of holding) res.writeHead(200).end();
    holding = [];
    expect((await Promise.all(busy)).every((r) => r.outcome === 'succeeded')).to.equal(true);
    expect(await queued).to.include({ statusCode: null, error: LEASE_LOST });
    expect(arrived).to.not.include('queued');
  });
});

describe('webhook retry waits', () => {
  it('grow exponentially from 3 s and never fall below the base', () => {
    expect(nextWaitMs(1, null, () => 0)).to.equal(3000);
    expect(nextWaitMs(2, null, () => 0)).to.equal(6000);
    expect(nextWaitMs(5, null, () => 0)).to.equal(48_000);
  });
  it('add at most 25 % jitter', () => {
    expect(nextWaitMs(1, null, () => 0.999)).to.be.within(3000, 3750);
  });
  it('honour a longer Retry-After, and ignore a shorter one', () => {
    expect(nextWaitMs(1, 60, () => 0)).to.equal(60_000);
    expect(nextWaitMs(3, 1, () => 0)).to.equal(12_000);
  });
  it('start from WEBHOOK_RETRY_BASE_MS when it is given', () => {
    expect([1, 2, 3].map((n) => nextWaitMs(n, null, () => 0, 50))).to.deep.equal([50, 100, 200]);
    expect(nextWaitMs(1, 2, () => 0, 50)).to.equal(2000);
  });
  it('never wait longer than one hour, jitter and Retry-After included, however many attempts were made', () => {
    expect(RETRY_MAX_WAIT_MS).to.equal(3_600_000);
    expect(nextWaitMs(11, null, () => 0)).to.equal(3_072_000); // the last uncapped wait: 51.2 min
    expect(nextWaitMs(11, null, () => 0.999)).to.equal(3_600_000); // its jitter would pass the hour
    expect(nextWaitMs(12, null, () => 0)).to.equal(3_600_000);
    expect(nextWaitMs(1000, null, () => 0.5)).to.equal(3_600_000);
    expect(nextWaitMs(2, 86_400, () => 0)).to.equal(3_600_000);
    expect(nextWaitMs(1, null, () => 0, 50, 120)).to.equal(50);
    expect(nextWaitMs(3, null, () => 0, 50, 120)).to.equal(120);
  });
  it('by default keep resending for at least a day: 3 s doubling to 51.2 min, then hourly, 35 resends over 25.7 h', () => {
    const waits = retrySchedule(DEFAULT_MAX_RETRIES);
    expect(waits.slice(0, 4)).to.deep.equal([3000, 6000, 12_000, 24_000]);
    expect(waits.filter((w) => w === RETRY_MAX_WAIT_MS)).to.have.length(DEFAULT_MAX_RETRIES - 11);
    const total = waits.reduce((a, b) => a + b, 0);
    expect(total).to.be.at.least(24 * 3_600_000);
    expect(total).to.equal(92_541_000);
    // The longest schedule a subscription may ask for stays within days, not weeks.
    expect(retrySchedule(MAX_RETRIES_LIMIT).reduce((a, b) => a + b, 0) / 3_600_000).to.be.within(90, 100);
  });
});
