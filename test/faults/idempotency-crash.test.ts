import { randomUUID } from 'node:crypto';
import { IdentitySigner } from '@svc/platform/identity';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import pg from 'pg';
import { type CallResult, client } from '../support/client.js';
import { seedTenant, type Tenant } from '../support/fixtures.js';
import { type Child, spawnEntry, waitReady } from '../support/processes.js';
import { freePort, type Stack, startStack } from '../support/stack.js';

const CONCURRENT = 30;

/**
 * A crm process killed (SIGKILL) while it holds idempotency keys of lead creations in `processing`: once the
 * attempt cannot be alive (its process's lock is gone), each key answers 409 "failed after starting, use a new
 * key" (or the lead, if its creation had committed), never "still processing" for ever (decision 0111).
 */
describe('fault: a crm process killed during keyed lead creations leaves no key processing for ever', () => {
  let stack: Stack | undefined;
  let crm: Child | undefined;
  let db: pg.Client | undefined;
  let blocker: pg.Client | undefined;

  after(async () => {
    await blocker?.end().catch(() => undefined);
    await db?.end();
    await crm?.stop('SIGKILL');
    await stack?.stop();
  });

  it(`answers each of ${CONCURRENT} keys of a killed attempt as failed (409) or done, and a live attempt's key as processing`, async function () {
    this.timeout(240_000);
    stack = await startStack();
    const call = client(stack.gatewayUrl).call;
    const t: Tenant = await seedTenant(call, stack.adminToken, { rate_limit_per_minute: 1_000_000 });
    const viaGateway = (key: string): Promise<CallResult> =>
      call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'Retried' }, headers: { 'x-idempotency-key': key } });
    expect((await call('POST', '/integrations/external/leads', { token: t.key.key, body: { title: 'First' } })).status).to.equal(201);

    // A second crm process on the same database, which the test kills.
    const httpPort = await freePort();
    crm = spawnEntry('services/crm/src/main.ts', {
      ...stack.env,
      HTTP_PORT: String(httpPort),
      GRPC_PORT: String(await freePort()),
      // Room for every attempt to reserve its key while the others wait on the sequence.
      DB_POOL_MAX: String(CONCURRENT * 2),
      LOG_LEVEL: 'warn',
    });
    const crmUrl = `http://127.0.0.1:${httpPort}`;
    await waitReady(crmUrl);
    const token = await new IdentitySigner(stack.env.IDENTITY_TOKEN_SECRET!).sign({
      kind: 'integration',
      companyId: t.company.id,
      userId: t.user.id,
      keyId: t.key.id,
      permissions: ['*'],
    });

    // Every creation waits on the company's lead sequence, which the test holds: their keys stay processing.
    db = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await db.connect();
    blocker = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query(`select 1 from crm.company_sequences where company_id = $1 and entity = 'lead' for update`, [t.company.id]);
    const keys = Array.from({ length: CONCURRENT }, () => `crash-${randomUUID()}`);
    const inFlight = keys.map((key) =>
      fetch(`${crmUrl}/integrations/external/leads`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-identity': token, 'x-idempotency-key': key },
        body: JSON.stringify({ title: `Crash ${key}` }),
      }).catch(() => undefined),
    );
    const processing = async () =>
      Number(
        (await db!.query(`select count(*) from crm.lead_idempotency_keys where company_id = $1 and status = 'processing'`, [t.company.id]))
          .rows[0].count,
      );
    await eventually(async () => (await processing()) === CONCURRENT, 30_000);

    // While the attempts live, their keys are still processing.
    const alive = await viaGateway(keys[0]!);
    expect(alive.status, alive.text).to.equal(409);
    expect(alive.body.message).to.contain('still processing');

    crm.proc.kill('SIGKILL');
    await crm.exited;
    await Promise.all(inFlight);
    await blocker.query('rollback');

    const answers = await Promise.all(keys.map(viaGateway));
    const statuses = answers.map((a) => `${a.status} ${a.status === 409 ? (a.body.message as string) : ''}`);
    for (const a of answers) {
      expect(a.status, a.text).to.equal(409);
      expect(a.body.message, a.text).to.contain('failed after starting');
      expect(a.body.message).to.not.contain('still processing');
    }
    expect(statuses).to.have.length(CONCURRENT);
    // Answered once, the key is marked failed for good, and no lead of the killed attempts exists.
    expect(await processing()).to.equal(0);
    const { rows } = await db.query(`select count(*) from crm.leads where company_id = $1 and title like 'Crash %'`, [t.company.id]);
    expect(Number(rows[0].count)).to.equal(0);
    // A new key creates the lead.
    const fresh = await viaGateway(`fresh-${randomUUID()}`);
    expect(fresh.status, fresh.text).to.equal(201);
  });
});
