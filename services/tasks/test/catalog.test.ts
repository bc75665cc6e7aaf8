import { crmService } from '@svc/crm';
import { IdentitySigner } from '@svc/platform/identity';
import { type RunningService, startService } from '@svc/platform/service';
import type { TestDatabase } from '@svc/platform/testing';
import { describePlatformContract, serviceTestEnv } from '@svc/platform/testing-suite';
import { expect } from 'chai';
import { tasksService } from '../src/service.js';

/** tasks checks companies with crm over gRPC, never by reading crm's tables: a real crm runs beside it. */
describe('tasks service', () => {
  let crm: RunningService;
  let db: TestDatabase;
  let crmEnv: Record<string, string>;
  before(async () => {
    const t = await serviceTestEnv();
    db = t.db;
    crmEnv = t.env;
    crm = await startService(crmService, t.env);
  });
  after(async () => {
    await crm?.stop();
    await db?.drop();
  });

  describePlatformContract(tasksService, { env: () => ({ CRM_GRPC_URL: crm.grpcAddress }) });

  describe('task types and task stages (management API rows)', () => {
    let tasks: RunningService;
    let admin: (service: RunningService, method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
    let companyId: string;
    before(async () => {
      tasks = await startService(tasksService, { ...crmEnv, CRM_GRPC_URL: crm.grpcAddress });
      const token = await new IdentitySigner(crmEnv.IDENTITY_TOKEN_SECRET!).sign({ kind: 'admin' });
      admin = async (service, method, path, body) => {
        const res = await fetch(`${service.httpUrl}/admin/v1${path}`, {
          method,
          headers: { 'x-svc-identity': token, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: res.status, body: await res.json() };
      };
      companyId = (await admin(crm, 'POST', '/companies', { name: 'T', master_user: { name: 'M', email: 'm@t.test' } })).body.id;
    });
    after(() => tasks?.stop());

    it('creates a task type with defaults', async () => {
      const res = await admin(tasks, 'POST', `/companies/${companyId}/task-types`, { name: 'Call' });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.equal({ id: res.body.id, name: 'Call', icon: null, is_meeting: false, default_duration_minutes: null });
    });

    it('places stages last unless a position is given', async () => {
      const a = await admin(tasks, 'POST', `/companies/${companyId}/task-stages`, { name: 'A' });
      const b = await admin(tasks, 'POST', `/companies/${companyId}/task-stages`, { name: 'B', position: 10 });
      const c = await admin(tasks, 'POST', `/companies/${companyId}/task-stages`, { name: 'C', active: false });
      expect([a.body.position, b.body.position, c.body.position]).to.deep.equal([1, 10, 11]);
      expect(c.body.active).to.equal(false);
    });

    it('answers an unknown company with 404, learnt from crm over gRPC', async () => {
      const res = await admin(tasks, 'POST', '/companies/0190a3c2-6a4f-7b1e-8a3b-0123456789ab/task-types', { name: 'x' });
      expect(res.status).to.equal(404);
      expect(res.body.message).to.contain('Company');
    });

    it('answers 503 when crm cannot be reached, not 500', async () => {
      const orphan = await startService(tasksService, { ...crmEnv, CRM_GRPC_URL: '127.0.0.1:1' });
      try {
        const res = await admin(orphan, 'POST', `/companies/${companyId}/task-types`, { name: 'x' });
        expect(res.status).to.equal(503);
      } finally {
        await orphan.stop();
      }
    });
  });
});
