import { crmService } from '@svc/crm';
import { type RunningService, startService } from '@svc/platform/service';
import type { TestDatabase } from '@svc/platform/testing';
import { describePlatformContract, serviceTestEnv } from '@svc/platform/testing-suite';
import { webhooksService } from '../src/service.js';

describe('webhooks service', () => {
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
  describePlatformContract(webhooksService, { env: () => ({ CRM_GRPC_URL: crm.grpcAddress }) });
});
