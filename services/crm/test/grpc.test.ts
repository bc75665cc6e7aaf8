import { createHash } from 'node:crypto';
import { credentials } from '@grpc/grpc-js';
import { nativePool } from '@svc/platform/db/native';
import { AppError } from '@svc/platform/errors';
import { callUnary } from '@svc/platform/grpc/server';
import { IdentitySigner } from '@svc/platform/identity';
import { type RunningService, startService } from '@svc/platform/service';
import type { TestDatabase } from '@svc/platform/testing';
import { serviceTestEnv } from '@svc/platform/testing-suite';
import { CrmServiceClient } from '@svc/proto/crm/v1/crm';
import { expect } from 'chai';
import { crmService } from '../src/service.js';

describe('crm.v1.CrmService over gRPC', () => {
  let crm: RunningService;
  let db: TestDatabase;
  let grpc: CrmServiceClient;
  let admin: (method: string, path: string, body?: unknown) => Promise<any>;
  let company: any;
  let user: any;
  let key: any;

  before(async () => {
    const t = await serviceTestEnv();
    db = t.db;
    crm = await startService(crmService, t.env);
    grpc = new CrmServiceClient(crm.grpcAddress, credentials.createInsecure());
    const token = await new IdentitySigner(t.env.IDENTITY_TOKEN_SECRET!).sign({ kind: 'admin' });
    admin = async (method, path, body) => {
      const res = await fetch(`${crm.httpUrl}/admin/v1${path}`, {
        method,
        headers: { 'x-svc-identity': token, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res.json();
    };
    company = await admin('POST', '/companies', {
      name: 'G',
      plan_valid_until: '2031-05-01T00:00:00Z',
      master_user: { name: 'M', email: 'm@g.test' },
    });
    user = await admin('POST', `/companies/${company.id}/users`, { name: 'U', email: 'u@g.test' });
    key = await admin('POST', `/companies/${company.id}/keys`, {
      created_by_user_id: user.id,
      permissions: ['crm/lead.read'],
      allowed_domain: 'app.g.test',
      rate_limit_per_minute: 30,
    });
  });
  after(async () => {
    grpc?.close();
    await crm?.stop();
    await db?.drop();
  });

  const rejectsWith = async (p: Promise<unknown>, kind: AppError['kind']) => {
    try {
      await p;
      expect.fail('should reject');
    } catch (err) {
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).kind).to.equal(kind);
    }
  };

  it('resolves a key by the SHA-256 of the plain key, with its creator', async () => {
    const hash = createHash('sha256').update(key.key).digest('hex');
    const res = await callUnary(grpc, grpc.resolveKey, { key_hash: hash });
    expect(res.key).to.include({
      id: key.id,
      company_id: company.id,
      created_by_user_id: user.id,
      allowed_domain: 'app.g.test',
      active: true,
      deleted: false,
      rate_limit_per_minute: 30,
    });
    expect(res.key?.permissions).to.deep.equal(['crm/lead.read']);
    expect(res.creator).to.include({ id: user.id, active: true, archived: false });
  });

  it("answers a key look-up while every connection of crm's pool is taken and more work waits for one (decision 0145)", async () => {
    // The gateway admits every request with this look-up: under a load that fills crm's pool, a look-up queued
    // behind that load missed its deadline and refused every request of the key waiting for it (503).
    const pool = await nativePool(crm.ctx.orm);
    const busy = Array.from({ length: crm.ctx.config.DB_POOL_MAX + 4 }, () => pool.query('select pg_sleep(1.5)'));
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect(pool.waitingCount, 'statements waiting for a connection of the pool').to.be.greaterThan(0);
      const hash = createHash('sha256').update(key.key).digest('hex');
      const started = performance.now();
      const res = await callUnary(grpc, grpc.resolveKey, { key_hash: hash }, 1000);
      expect(res.key?.id).to.equal(key.id);
      expect(res.creator?.id).to.equal(user.id);
      expect(performance.now() - started, 'ms for the look-up').to.be.below(1000);
    } finally {
      await Promise.all(busy);
    }
  });

  it('answers an unknown hash with no key, and a malformed one with INVALID_ARGUMENT', async () => {
    const res = await callUnary(grpc, grpc.resolveKey, { key_hash: 'a'.repeat(64) });
    expect(res.key).to.equal(undefined);
    expect(res.creator).to.equal(undefined);
    await rejectsWith(callUnary(grpc, grpc.resolveKey, { key_hash: 'nope' }), 'invalid');
  });

  it('returns a company with its plan and master user; NOT_FOUND for an unknown or malformed id', async () => {
    const res = await callUnary(grpc, grpc.getCompany, { company_id: company.id });
    expect(res.company).to.deep.equal({
      id: company.id,
      name: 'G',
      plan_valid_until: '2031-05-01T00:00:00.000Z',
      master_user_id: company.master_user.id,
    });
    await rejectsWith(callUnary(grpc, grpc.getCompany, { company_id: '0190a3c2-6a4f-7b1e-8a3b-0123456789ab' }), 'not_found');
    await rejectsWith(callUnary(grpc, grpc.getCompany, { company_id: 'x' }), 'not_found');
  });

  it("returns a user of the company, and NOT_FOUND for another company's", async () => {
    const res = await callUnary(grpc, grpc.getUser, { company_id: company.id, user_id: user.id });
    expect(res.user).to.include({ id: user.id, email: 'u@g.test', company_id: company.id });
    const other = await admin('POST', '/companies', { name: 'O', master_user: { name: 'M', email: 'm@o.test' } });
    await rejectsWith(callUnary(grpc, grpc.getUser, { company_id: other.id, user_id: user.id }), 'not_found');
  });

  it('stores only the hash of a key, never the plain key', async () => {
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query('select * from crm.integration_keys where id = $1', [key.id]);
      expect(JSON.stringify(rows)).to.not.contain(key.key);
      expect(rows[0].key_hash).to.equal(createHash('sha256').update(key.key).digest('hex'));
    } finally {
      await c.end();
    }
  });
});
