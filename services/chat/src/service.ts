import { platformEntities, type ServiceDefinition } from '@svc/platform/service';
import { migrations } from './migrations/index.js';

/**
 * The chat bounded context. Its domain arrives with its own issue; until then it runs the shared
 * platform: schema and outbox, relay, gRPC health, HTTP health, readiness and metrics.
 */
export const chatService: ServiceDefinition = {
  name: 'chat',
  defaults: { HTTP_PORT: '8083', GRPC_PORT: '9083' },
  db: { schema: 'chat', entities: [...platformEntities], migrations },
};
