import { spawn } from 'node:child_process';
import { connectNats, type Nats } from '@svc/platform/events/nats';
import { createLogger } from '@svc/platform/logging';
import { eventually, TEST_NATS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { client } from '../support/client.js';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { REPO_ROOT } from '../support/processes.js';
import { type Stack, startStack } from '../support/stack.js';
import { backlog, type LeadReceiver, quiet, subscribedLeadReceiver } from './helpers.js';

/** `npm run events:replay -- …` as an operator runs it, against this stack's Postgres and NATS. */
async function replayCommand(stack: Stack, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('npm', ['run', '--silent', 'events:replay', '--', ...args], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATABASE_URL: stack.env.DATABASE_URL!,
      NATS_URL: stack.env.NATS_URL!,
      NATS_STREAM: stack.env.NATS_STREAM!,
      EVENT_SUBJECT_PREFIX: stack.env.EVENT_SUBJECT_PREFIX!,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { code, stdout, stderr };
}

/**
 * NATS 2.9 acknowledges a publish before it is on disk, so a message can be lost after the relay marked
 * its row published. Simulated here: the webhooks service is stopped, leads are created and relayed, and
 * the stream is purged before the consumer saw them. `events:replay` publishes the company's outbox rows
 * again; each subscription gets the lost events once, with their original event ids, and not the event
 * it had already received.
 */
describe('fault: events lost on JetStream are recovered by events:replay', () => {
  let stack: Stack | undefined;
  let nats: Nats | undefined;
  let db: pg.Client | undefined;
  const receivers: LeadReceiver[] = [];

  after(async () => {
    await db?.end();
    await nats?.nc.close();
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.stop();
  });

  it('replays a company range: lost events are delivered once with their ids, received ones are not sent again', async function () {
    this.timeout(240_000);
    stack = await startStack({ processes: ['webhooks'] });
    const call = client(stack.gatewayUrl).call;
    const subscribe = async (t: Tenant) => {
      const r = await subscribedLeadReceiver(call, stack!.adminToken, t.company.id);
      receivers.push(r);
      return r;
    };
    const lead = async (t: Tenant, title: string) => {
      const res = await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title } });
      expect(res.status, res.text).to.equal(201);
      return res.body.id as string;
    };
    const a = await seedTenant(call, stack.adminToken);
    const b = await seedTenant(call, stack.adminToken);
    const [a1, a2, b1] = [await subscribe(a), await subscribe(a), await subscribe(b)];
    db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    nats = await connectNats(TEST_NATS_URL, 'replay-test', createLogger('test', 'silent'));
    const stream = stack.env.NATS_STREAM!;
    const since = new Date(Date.now() - 1000);

    // Delivered normally.
    const first = await lead(a, 'Delivered');
    const firstOfB = await lead(b, 'Delivered of B');
    await eventually(() => a1.byLead.has(first) && a2.byLead.has(first) && b1.byLead.has(firstOfB), 30_000);

    // Lost: relayed to JetStream and marked published, then gone before the (stopped) consumer saw them.
    await stack.processes.webhooks!.stop();
    const lost = [await lead(a, 'Lost 1'), await lead(a, 'Lost 2'), await lead(a, 'Lost 3')];
    const lostOfB = await lead(b, 'Lost of B');
    const unpublished = async () => Number((await db!.query('select count(*) as n from crm.outbox where published_at is null')).rows[0].n);
    await eventually(async () => (await unpublished()) === 0, 30_000);
    expect((await nats.jsm.streams.info(stream)).state.messages).to.be.at.least(6);
    await nats.jsm.streams.purge(stream);
    await stack.processes.webhooks!.restart();
    await eventually(async () => quiet(await backlog(stack!, TEST_NATS_URL)), 30_000, 250);
    for (const r of [a1, a2]) expect([...r.byLead.keys()]).to.deep.equal([first]);

    // The operator replays company A since before the first lead.
    const count = async (sql: string) => Number((await db!.query(sql, [a.company.id, since])).rows[0].n);
    const expected = await count('select count(*) as n from crm.outbox where company_id = $1 and occurred_at >= $2');
    expect(
      await count(`select count(*) as n from crm.outbox where company_id = $1 and occurred_at >= $2 and event_key = 'lead.created'`),
    ).to.equal(4);
    const run = await replayCommand(stack, ['--service', 'crm', '--company', a.company.id, '--since', since.toISOString()]);
    expect(run.code, run.stderr).to.equal(0);
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    expect(summary).to.deep.include({ service: 'crm', company_id: a.company.id, replayed: expected, unpublished: 0 });

    await eventually(
      async () => lost.every((id) => a1.byLead.has(id) && a2.byLead.has(id)) && quiet(await backlog(stack!, TEST_NATS_URL)),
      60_000,
      250,
    );
    // The original event ids, one delivery of each event per subscription, the first event not sent again.
    const ids = new Map(
      (await db.query(`select id, payload->'lead'->>'id' as lead from crm.outbox where event_key = 'lead.created'`)).rows.map((r) => [
        r.lead as string,
        r.id as string,
      ]),
    );
    for (const r of [a1, a2]) {
      expect(r.problems).to.deep.equal([]);
      expect(new Set(r.byLead.keys())).to.deep.equal(new Set([first, ...lost]));
      for (const [leadId, eventIds] of r.byLead) expect([...eventIds]).to.deep.equal([ids.get(leadId)]);
      expect([...r.confirmations.values()]).to.deep.equal([1, 1, 1, 1]);
      expect(r.requests()).to.equal(4);
    }
    // Company B was not replayed: its lost event stays lost.
    expect([...b1.byLead.keys()]).to.deep.equal([firstOfB]);
    expect(b1.byLead.has(lostOfB)).to.equal(false);
    expect((await backlog(stack, TEST_NATS_URL)).deliveries).to.equal(2 * 4 + 1);
  });

  it('refuses a bad command line with exit code 2 and says why', async function () {
    this.timeout(60_000);
    const run = await replayCommand(stack!, ['--service', 'crm', '--company', 'nope', '--since', '2026-01-01T00:00:00Z']);
    expect(run.code).to.equal(2);
    expect(run.stderr).to.contain('--company: must be the company id');
    const unknown = await replayCommand(stack!, [
      '--service',
      'billing',
      '--company',
      '0190a3c2-6a4f-7b1e-8a3b-0123456789ab',
      '--since',
      '2026-01-01T00:00:00Z',
    ]);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain('--service must be one of crm, tasks, chat, files, webhooks');
  });
});
