import { env, serviceConfigSchema } from '@svc/platform/config';
import { CrmPeer } from '@svc/platform/peers/crm';
import { platformEntities, type ServiceDefinition } from '@svc/platform/service';
import { TaskStage, TaskType } from './catalog/catalog.entity.js';
import { taskCatalogAdminRoutes } from './catalog/catalog.http.js';
import { TaskCatalog } from './catalog/catalog.service.js';
import { migrations } from './migrations/index.js';

const tasksConfig = serviceConfigSchema.extend({ CRM_GRPC_URL: env.hostPort });

interface Components {
  crm: CrmPeer;
  catalog: TaskCatalog;
}

export const tasksService: ServiceDefinition<typeof tasksConfig, Components> = {
  name: 'tasks',
  configSchema: tasksConfig,
  defaults: { HTTP_PORT: '8082', GRPC_PORT: '9082' },
  db: { schema: 'tasks', entities: [...platformEntities, TaskType, TaskStage], migrations },
  setup: (ctx) => {
    const crm = new CrmPeer(ctx.config.CRM_GRPC_URL);
    return { crm, catalog: new TaskCatalog(crm) };
  },
  http:
    (ctx, { catalog }) =>
    (app) => {
      app.use('/admin/v1', taskCatalogAdminRoutes(ctx, catalog));
    },
  workers:
    async (_ctx, { crm }) =>
    async () =>
      crm.close(),
};
