import { eventually, TEST_NATS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from '../support/client.js';
import { type OwnPostgres, startOwnPostgres } from '../support/servers.js';
import { type Stack, startStack } from '../support/stack.js';
import { backlog, burstTenant, type LeadReceiver, leadBurst, quiet, summary } from './helpers.js';

const BURST = 500;
/** Leads created (answered 201) when Postgres is stopped, and how. */
const STOPS: [number, 'fast' | 'immediate'][] = [
  [100, 'fast'],
  [300, 'immediate'],
];

/**
 * The stack's own Postgres is stopped (fast: clients disconnected and a checkpoint; immediate: no
 * checkpoint, crash recovery at start) and started again on the same port and data folder while leads
 * are created through the gateway. Requests during the outage may fail (5xx); every lead that answered
 * 201 is committed, so its lead.created is delivered, with one event id. No service is restarted.
 */
describe('fault: Postgres restarted during a burst loses nothing committed', () => {
  let postgres: OwnPostgres | undefined;
  let stack: Stack | undefined;
  let receiver: LeadReceiver | undefined;

  after(async () => {
    await receiver?.close();
    await stack?.stop();
    await postgres?.close();
  });

  it(`delivers every lead answered 201 in a ${BURST}-lead burst across a fast and an immediate restart`, async function () {
    this.timeout(240_000);
    postgres = await startOwnPostgres();
    stack = await startStack({ postgresUrl: postgres.url });
    const call = client(stack.gatewayUrl).call;
    const setup = await burstTenant(call, stack.adminToken);
    const t = setup.t;
    receiver = setup.receiver;

    const burst = leadBurst(call, t.key.key, { total: BURST, concurrency: 8 });
    for (const [at, mode] of STOPS) {
      await eventually(() => burst.created.length >= at, 120_000, 20);
      await postgres.stop(mode);
      // Requests keep coming while Postgres is down; they fail, nothing is committed.
      await new Promise((r) => setTimeout(r, 1500));
      await postgres.start();
    }
    await burst.done;

    const created = burst.created;
    expect(created.length).to.equal(BURST);
    await eventually(
      async () => created.every((id) => receiver!.byLead.has(id)) && quiet(await backlog(stack!, TEST_NATS_URL)),
      150_000,
      250,
    );
    expect(receiver.problems).to.deep.equal([]);
    for (const id of created) expect(receiver.byLead.get(id)?.size, `lead ${id}`).to.equal(1);
    console.log(
      `      ${created.length} leads answered 201, ${receiver.events.size} events delivered, ${receiver.requests()} requests; ` +
        `failed creations: ${summary(burst.failures)}`,
    );
  });
});
