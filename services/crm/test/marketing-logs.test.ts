import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { connectNats } from '@svc/platform/events/nats';
import { IdentitySigner } from '@svc/platform/identity';
import { createLogger } from '@svc/platform/logging';
import { eventually, type TestDatabase } from '@svc/platform/testing';
import { serviceTestEnv } from '@svc/platform/testing-suite';
import { expect } from 'chai';
import pg from 'pg';
import { REDACTED_URL } from '../src/marketing/redaction.js';

/**
 * Rule 5: the full conversion URL is never logged. crm runs as its own process at LOG_LEVEL=trace and every
 * line it writes is searched, after creations that store the URL, a divergence that refuses it and a database
 * failure that quotes the row holding it.
 */
describe('crm logs never contain the full conversion URL', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let env: Record<string, string>;
  let child: ChildProcess;
  let output = '';
  let base: string;
  let admin: (path: string, body: unknown) => Promise<any>;
  let lead: (body: unknown) => Promise<{ status: number; body: any }>;
  const secret = `obref-${randomBytes(8).toString('hex')}`;
  const url = `https://landing.example.test/offer?utm_source=Newsletter&obref=${secret}&token=${secret}#frag-${secret}`;

  const stopChild = async () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };

  before(async () => {
    ({ db, env } = await serviceTestEnv({ LOG_LEVEL: 'trace' }));
    child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, '../src/main.ts')], {
      cwd: resolve(import.meta.dirname, '..'),
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (c) => (output += c));
    child.stderr?.on('data', (c) => (output += c));
    const port = await eventually(() => /"httpPort":(\d+)/.exec(output)?.[1], 30_000);
    base = `http://127.0.0.1:${port}`;
    const signer = new IdentitySigner(env.IDENTITY_TOKEN_SECRET!);
    const adminToken = await signer.sign({ kind: 'admin' });
    const send = async (path: string, token: string, body: unknown) => {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { 'x-svc-identity': token, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    admin = async (path, body) => {
      const res = await send(`/admin/v1${path}`, adminToken, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body;
    };
    const company = await admin('/companies', { name: 'Logs', master_user: { name: 'M', email: 'm@logs.test' } });
    await admin(`/companies/${company.id}/pipelines`, { name: 'P', is_primary: true, stages: [{ name: 'New' }] });
    const token = await signer.sign({
      kind: 'integration',
      companyId: company.id,
      userId: company.master_user.id,
      keyId: randomUUID(),
      permissions: ['*'],
    });
    lead = (body) => send('/integrations/external/leads', token, body);
  });
  after(async () => {
    await stopChild();
    const nats = await connectNats(env.NATS_URL!, 'test-cleanup', createLogger('test', 'silent'));
    await nats.jsm.streams.delete(env.NATS_STREAM!).catch(() => undefined);
    await nats.nc.close();
    await db?.drop();
  });

  it('stores the URL, refuses a divergence, fails on the database, and none of it reaches a log line', async () => {
    expect((await lead({ title: 'Granted', marketing: { url_conversion: url } })).status).to.equal(201);
    expect((await lead({ title: 'Denied', measurement_consent: 'DENIED', marketing: { url_conversion: ` ${url} ` } })).status).to.equal(
      201,
    );
    const divergent = await lead({
      title: 'Divergent',
      measurement_consent: 'GRANTED',
      marketing: { measurement_consent: 'DENIED', url_conversion: url },
    });
    expect(divergent.status).to.equal(400);

    // A database failure whose message and detail quote the row holding the stored URL.
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      await c.query(`create function crm.refuse_acquisition() returns trigger language plpgsql as $$
        begin raise exception 'refused %', NEW using detail = 'Failing row contains ' || NEW::text; end $$`);
      await c.query(
        'create trigger refuse_acquisition before insert on crm.marketing_acquisitions for each row execute function crm.refuse_acquisition()',
      );
    } finally {
      await c.end();
    }
    const failed = await lead({ title: 'Refused', marketing: { url_conversion: url } });
    expect(failed.status).to.equal(500);
    expect(JSON.stringify(failed.body)).to.not.contain(secret);

    await eventually(() => output.includes('unhandled error'), 10_000);
    await stopChild();
    const lines = output.split('\n').filter(Boolean);
    expect(lines.length).to.be.greaterThan(3);
    const unhandled = lines.find((l) => l.includes('unhandled error'))!;
    expect(unhandled, 'the failure is logged, with the URL replaced').to.contain(REDACTED_URL);
    for (const line of lines) expect(line).to.not.contain(secret);
  });
});
