import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { adminOf, seedTenant } from '../support/fixtures.js';
import { type Stack, startStack } from '../support/stack.js';

const BURST = 1000;
/** Lead creations in flight at once through the gateway. */
const CONCURRENCY = 16;

/**
 * Kill -9 the webhooks service in the middle of a burst, with some deliveries waiting on a retry;
 * restart it; every lead.created reaches the receiver at least once, signed, with one stable event id.
 */
describe('fault: the webhooks service killed mid-burst loses no event', () => {
  let stack: Stack;
  let receiver: http.Server;
  /** event id → lead id, for every delivery answered 2xx. */
  const confirmed = new Map<string, string>();
  const problems: string[] = [];
  let requests = 0;

  after(async () => {
    receiver?.close();
    await stack?.stop();
  });

  it(`delivers every event of a ${BURST}-lead burst after a SIGKILL and a restart`, async function () {
    this.timeout(240_000);
    stack = await startStack({ processes: ['webhooks'] });
    const call = client(stack.gatewayUrl).call;
    // The burst is faster than the default 600 requests a minute of a key.
    const t = await seedTenant(call, stack.adminToken, { rate_limit_per_minute: 1_000_000 });
    let secret = '';
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        requests++;
        const raw = Buffer.concat(chunks);
        const body = JSON.parse(raw.toString('utf8'));
        if (req.headers['x-svc-signature'] !== `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`)
          problems.push(`bad signature ${body.event_id}`);
        if (req.headers['x-svc-event-id'] !== body.event_id) problems.push(`header and body ids differ ${body.event_id}`);
        const known = confirmed.get(body.event_id);
        if (known && known !== body.payload.lead.id) problems.push(`event id ${body.event_id} reused for another lead`);
        // Every 7th request fails, so some deliveries wait on a retry when the kill comes.
        if (requests % 7 === 0) {
          res.writeHead(503).end();
          return;
        }
        confirmed.set(body.event_id, body.payload.lead.id);
        setTimeout(() => res.writeHead(200).end('ok'), 5);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const sub = await adminOf(call, stack.adminToken)('POST', `/companies/${t.company.id}/webhooks`, { url, events: ['lead.created'] });
    secret = sub.body.secret;

    const created: string[] = [];
    let next = 0;
    const workers = Array.from({ length: CONCURRENCY }, async () => {
      while (next < BURST) {
        const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: `Burst ${next++}` } });
        expect(res.status, res.text).to.equal(201);
        created.push(res.body.id);
      }
    });
    await eventually(() => requests >= 200, 120_000);
    const createdAtKill = created.length;
    await stack.processes.webhooks!.child.stop('SIGKILL');
    await Promise.all(workers);
    expect(createdAtKill, 'killed while leads were still being created').to.be.below(BURST);
    await stack.processes.webhooks!.restart();

    await eventually(() => confirmed.size >= BURST, 150_000, 200);
    expect(problems).to.deep.equal([]);
    expect(confirmed.size).to.equal(BURST);
    expect(new Set(confirmed.values())).to.deep.equal(new Set(created));
  });
});
