import { crmService } from '@svc/crm';
import { type RunningService, startService } from '@svc/platform/service';
import type { TestDatabase } from '@svc/platform/testing';
import { describePlatformContract, serviceTestEnv } from '@svc/platform/testing-suite';
import { chatService } from '../src/service.js';

/** chat reads companies, users and persons from crm over gRPC: a real crm runs beside it. */
describe('chat service', () => {
  let crm: RunningService;
  let db: TestDatabase;
  before(async () => {
    const t = await serviceTestEnv();
    db = t.db;
    crm = await startService(crmService, t.env);
  });
  after(async () => {
    await crm?.stop();
    await db?.drop();
  });
  describePlatformContract(chatService, { env: () => ({ CRM_GRPC_URL: crm.grpcAddress }) });
});
