import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { type OwnNats, startOwnNats } from '../support/servers.js';
import { type Stack, startStack } from '../support/stack.js';
import { backlog, burstTenant, type LeadReceiver, leadBurst, quiet, summary } from './helpers.js';

const BURST = 600;
/** Leads created (answered 201) when NATS is killed, once each. */
const KILL_AT = [120, 360];

/**
 * The stack's own nats-server is killed (SIGKILL) and started again on the same port and store, twice,
 * while leads are created through the gateway. Nothing is restarted but NATS: the relays and the
 * webhooks consumer reconnect by themselves, and every lead.created reaches the receiver, at least
 * once, always with the same event id.
 */
describe('fault: NATS killed and restarted during a burst loses no event', () => {
  let nats: OwnNats | undefined;
  let stack: Stack | undefined;
  let receiver: LeadReceiver | undefined;

  after(async () => {
    await receiver?.close();
    await stack?.stop();
    await nats?.close();
  });

  it(`delivers every event of a ${BURST}-lead burst across two NATS kills`, async function () {
    this.timeout(240_000);
    nats = await startOwnNats();
    stack = await startStack({ natsUrl: nats.url });
    const call = client(stack.gatewayUrl).call;
    const setup = await burstTenant(call, stack.adminToken);
    const t = setup.t;
    receiver = setup.receiver;

    const burst = leadBurst(call, t.key.key, { total: BURST, concurrency: 8 });
    const pids = [nats.pid()];
    for (const at of KILL_AT) {
      await eventually(() => burst.created.length >= at, 90_000, 20);
      await nats.kill();
      // Leads keep being created (Postgres only) while NATS is away; the relay's publishes fail and wait. The services
      // stay ready: the outbox decouples writes from NATS (decision 0189), and /readyz says what it sees of NATS.
      await new Promise((r) => setTimeout(r, 1500));
      for (const running of Object.values(stack.services)) {
        const ready = await fetch(`${running!.httpUrl}/readyz`);
        const body = (await ready.json()) as { status: string; checks: Record<string, string> };
        expect(ready.status, `${running!.ctx.name} /readyz ${JSON.stringify(body)}`).to.equal(200);
        expect(body.checks.postgres).to.equal('ok');
        expect(body.checks.nats).to.not.equal('ok');
      }
      await nats.start();
      pids.push(nats.pid());
    }
    await burst.done;
    expect(new Set(pids).size, 'a new nats-server process each time').to.equal(pids.length);

    const created = burst.created;
    await eventually(async () => created.every((id) => receiver!.byLead.has(id)) && quiet(await backlog(stack!, nats!.url)), 150_000, 250);
    expect(receiver.problems).to.deep.equal([]);
    for (const id of created) expect(receiver.byLead.get(id)?.size, `lead ${id}`).to.equal(1);
    expect(created.length).to.equal(BURST);
    console.log(
      `      ${created.length} leads, ${receiver.events.size} events delivered, ${receiver.requests()} requests; ` +
        `failed creations: ${summary(burst.failures)}`,
    );
  });
});
