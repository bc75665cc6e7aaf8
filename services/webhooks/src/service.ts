import { env, serviceConfigSchema } from '@svc/platform/config';
import { fileUrlSecret } from '@svc/platform/files/signed-url';
import { CrmPeer } from '@svc/platform/peers/crm';
import type { ServiceDefinition } from '@svc/platform/service';
import type { Pool } from 'pg';
import { z } from 'zod';
import { dbDefinition, poolOf } from './db.js';
import { EventConsumer } from './deliveries/consumer.js';
import { type DeliveryMetrics, deliveryMetrics, deliveryStateMetrics } from './deliveries/delivery.metrics.js';
import { deliveryCounts } from './deliveries/delivery.store.js';
import type { DestinationPolicy } from './deliveries/destination.js';
import { Dispatcher } from './deliveries/dispatcher.js';
import { WebhookSender } from './deliveries/sender.js';
import { subscriptionApiRoutes } from './subscriptions/subscription.api.js';
import { webhookEvents } from './subscriptions/subscription.contract.js';
import { webhookAdminRoutes } from './subscriptions/subscription.http.js';
import { SubscriptionService } from './subscriptions/subscription.service.js';

interface Components {
  pool: () => Promise<Pool>;
  crm: CrmPeer;
  sender: WebhookSender;
  subscriptions: SubscriptionService;
  dispatcher: Dispatcher;
  destinations: DestinationPolicy;
  metrics: DeliveryMetrics;
}

/** true, 1, yes, on or false, 0, no, off (any case). */
const flag = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', '1', 'yes', 'on', 'false', '0', 'no', 'off'], { message: 'must be true or false' }))
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));

const webhooksConfig = serviceConfigSchema.extend({
  CRM_GRPC_URL: env.hostPort,
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(2000).default(128),
  /** Over every replica. */
  WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: z.coerce.number().int().min(1).max(2000).default(10),
  /** How soon a stalled replica's deliveries move. */
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(1000).max(60_000).default(6000),
  /** Loopback, private, link-local... (never cloud metadata). */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: flag.default(false),
  /** Later waits double. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(3000),
  /** A receiver's Retry-After included (decision 0121). */
  WEBHOOK_RETRY_MAX_WAIT_MS: z.coerce.number().int().min(1).max(86_400_000).default(3_600_000),
  /** Consecutive deliveries ended failed (0: never)... */
  WEBHOOK_DISABLE_AFTER_FAILURES: z.coerce.number().int().min(0).default(20),
  /** ...over at least this long. */
  WEBHOOK_DISABLE_AFTER_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 3600 * 1000),
  /** The files service's public download route. */
  FILES_PUBLIC_BASE_URL: env.httpUrl.default('http://127.0.0.1:8080/public/files'),
  /** Shared with files; derived from IDENTITY_TOKEN_SECRET when unset. */
  FILE_URL_SIGNING_SECRET: env.secret.optional(),
});

export const webhooksService: ServiceDefinition<typeof webhooksConfig, Components> = {
  name: 'webhooks',
  configSchema: webhooksConfig,
  defaults: { HTTP_PORT: '8085', GRPC_PORT: '9085', METRICS_PORT: '9185' },
  db: dbDefinition,
  setup: (ctx) => {
    const crm = new CrmPeer(ctx.config.CRM_GRPC_URL);
    const destinations = { allowPrivateNetworks: ctx.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS };
    const sender = new WebhookSender(
      {
        baseUrl: ctx.config.FILES_PUBLIC_BASE_URL,
        secret: fileUrlSecret(ctx.config.FILE_URL_SIGNING_SECRET, ctx.config.IDENTITY_TOKEN_SECRET),
      },
      destinations,
    );
    const pool = poolOf(ctx.orm);
    const metrics = deliveryMetrics(ctx.metrics);
    deliveryStateMetrics(ctx.metrics, async () => deliveryCounts(await pool()));
    return {
      pool,
      crm,
      sender,
      metrics,
      subscriptions: new SubscriptionService(crm, pool),
      destinations,
      dispatcher: new Dispatcher(ctx, pool, sender, {
        concurrency: ctx.config.WEBHOOK_CONCURRENCY,
        perSubscription: ctx.config.WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY,
        leaseMs: ctx.config.WEBHOOK_LEASE_MS,
        retryBaseMs: ctx.config.WEBHOOK_RETRY_BASE_MS,
        retryMaxWaitMs: ctx.config.WEBHOOK_RETRY_MAX_WAIT_MS,
        health: { disableAfterFailures: ctx.config.WEBHOOK_DISABLE_AFTER_FAILURES, disableAfterMs: ctx.config.WEBHOOK_DISABLE_AFTER_MS },
        metrics,
      }),
    };
  },
  events: webhookEvents,
  api: (_ctx, { pool, subscriptions, dispatcher, destinations }) => [
    { prefix: '/integrations/external', router: subscriptionApiRoutes(pool, subscriptions, () => dispatcher.wake(), destinations) },
  ],
  http:
    (_ctx, { pool, subscriptions, dispatcher, destinations }) =>
    (app) => {
      app.use(
        '/admin/v1',
        webhookAdminRoutes(pool, subscriptions, () => dispatcher.wake(), destinations),
      );
    },
  workers: async (ctx, { pool, crm, sender, dispatcher, metrics }) => {
    const consumer = new EventConsumer(ctx, crm, dispatcher, metrics, pool);
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
