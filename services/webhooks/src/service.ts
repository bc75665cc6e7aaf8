import { env, serviceConfigSchema } from '@svc/platform/config';
import { CrmPeer } from '@svc/platform/peers/crm';
import { platformEntities, type ServiceDefinition } from '@svc/platform/service';
import { z } from 'zod';
import { EventConsumer } from './deliveries/consumer.js';
import { Delivery, DeliveryAttempt } from './deliveries/delivery.entity.js';
import { Dispatcher } from './deliveries/dispatcher.js';
import { WebhookSender } from './deliveries/sender.js';
import { migrations } from './migrations/index.js';
import { Subscription } from './subscriptions/subscription.entity.js';
import { webhookAdminRoutes } from './subscriptions/subscription.http.js';
import { SubscriptionService } from './subscriptions/subscription.service.js';

interface Components {
  crm: CrmPeer;
  sender: WebhookSender;
  subscriptions: SubscriptionService;
  dispatcher: Dispatcher;
}

const webhooksConfig = serviceConfigSchema.extend({
  CRM_GRPC_URL: env.hostPort,
  /** Deliveries in flight at once in this process. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(2000).default(128),
});

export const webhooksService: ServiceDefinition<typeof webhooksConfig, Components> = {
  name: 'webhooks',
  configSchema: webhooksConfig,
  defaults: { HTTP_PORT: '8085', GRPC_PORT: '9085' },
  db: { schema: 'webhooks', entities: [...platformEntities, Subscription, Delivery, DeliveryAttempt], migrations },
  setup: (ctx) => {
    const crm = new CrmPeer(ctx.config.CRM_GRPC_URL);
    const sender = new WebhookSender();
    return {
      crm,
      sender,
      subscriptions: new SubscriptionService(crm),
      dispatcher: new Dispatcher(ctx, sender, { concurrency: ctx.config.WEBHOOK_CONCURRENCY }),
    };
  },
  http:
    (ctx, { subscriptions, dispatcher }) =>
    (app) => {
      app.use(
        '/admin/v1',
        webhookAdminRoutes(ctx, subscriptions, () => dispatcher.wake()),
      );
    },
  workers: async (ctx, { crm, subscriptions, sender, dispatcher }) => {
    const consumer = new EventConsumer(ctx, crm, subscriptions, () => dispatcher.wake());
    dispatcher.start();
    await consumer.start();
    return async () => {
      await consumer.stop();
      await dispatcher.stop();
      await sender.close();
      crm.close();
    };
  },
};
