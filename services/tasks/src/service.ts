import { env, serviceConfigSchema } from '@svc/platform/config';
import { askPlan } from '@svc/platform/events/plan';
import { CrmPeer } from '@svc/platform/peers/crm';
import type { ServiceDefinition } from '@svc/platform/service';
import { z } from 'zod';
import { taskCatalogAdminRoutes } from './catalog/catalog.http.js';
import { TaskCatalog } from './catalog/catalog.service.js';
import { dbDefinition, poolOf } from './db.js';
import { CrmRecords } from './links/crm-records.js';
import { taskEvents } from './tasks/task.contract.js';
import { taskCountGrpc } from './tasks/task.grpc.js';
import { taskRoutes } from './tasks/task.http.js';
import { SeriesMaterializer } from './tasks/task.materializer.js';
import { TaskService } from './tasks/task.service.js';

const tasksConfig = serviceConfigSchema.extend({
  CRM_GRPC_URL: env.hostPort,
  RECURRENCE_HORIZON_DAYS: z.coerce.number().int().min(1).max(3660).default(90),
  RECURRENCE_SWEEP_MS: z.coerce.number().int().min(1000).default(3_600_000),
});

interface Components {
  crm: CrmPeer;
  records: CrmRecords;
  catalog: TaskCatalog;
  tasks: TaskService;
  materializer: SeriesMaterializer;
}

export const tasksService: ServiceDefinition<typeof tasksConfig, Components> = {
  name: 'tasks',
  configSchema: tasksConfig,
  defaults: { HTTP_PORT: '8082', GRPC_PORT: '9082', METRICS_PORT: '9182' },
  db: dbDefinition,
  setup: (ctx) => {
    const crm = new CrmPeer(ctx.config.CRM_GRPC_URL);
    const records = new CrmRecords(ctx.config.CRM_GRPC_URL);
    const pool = poolOf(ctx.orm);
    return {
      crm,
      records,
      catalog: new TaskCatalog(pool, crm),
      tasks: new TaskService({ pool, crm, records, outbox: ctx.outbox, horizonDays: ctx.config.RECURRENCE_HORIZON_DAYS }),
      materializer: new SeriesMaterializer(pool, {
        horizonDays: ctx.config.RECURRENCE_HORIZON_DAYS,
        intervalMs: ctx.config.RECURRENCE_SWEEP_MS,
        logger: ctx.logger,
      }),
    };
  },
  http:
    (_ctx, { catalog }) =>
    (app) => {
      app.use('/admin/v1', taskCatalogAdminRoutes(catalog));
    },
  api: (_ctx, { tasks }) => [{ prefix: '/integrations/external', router: taskRoutes(tasks) }],
  // crm's lead and deal details show the task count.
  grpc: (ctx) => [taskCountGrpc(poolOf(ctx.orm), ctx.logger)],
  events: taskEvents,
  // crm owns the plan (asked over gRPC, cached).
  plan: (_ctx, { crm }) => askPlan((companyId) => crm.getCompany(companyId)),
  workers: async (_ctx, { crm, records, materializer }) => {
    materializer.start();
    return async () => {
      await materializer.stop();
      crm.close();
      records.close();
    };
  },
};
