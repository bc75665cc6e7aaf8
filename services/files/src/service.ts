import { platformEntities, type ServiceDefinition } from '@svc/platform/service';
import { migrations } from './migrations/index.js';

/**
 * The files bounded context. Its domain arrives with its own issue; until then it runs the shared
 * platform: schema and outbox, relay, gRPC health, HTTP health, readiness and metrics.
 */
export const filesService: ServiceDefinition = {
  name: 'files',
  defaults: { HTTP_PORT: '8084', GRPC_PORT: '9084' },
  db: { schema: 'files', entities: [...platformEntities], migrations },
};
