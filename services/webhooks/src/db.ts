import { type DbDefinition, platformEntities } from '@svc/platform/service';
import { Delivery, DeliveryAttempt } from './deliveries/delivery.entity.js';
import { migrations } from './migrations/index.js';
import { Subscription } from './subscriptions/subscription.entity.js';

export const dbDefinition: DbDefinition = {
  schema: 'webhooks',
  entities: [...platformEntities, Subscription, Delivery, DeliveryAttempt],
  migrations,
};

export { poolOf } from '@svc/platform/db/native';
