import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import type { WebhookAuth } from '../deliveries/delivery.entity.js';

export const Subscription = defineEntity({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    url: p.text(),
    description: p.text().nullable(),
    events: p.json<string[]>(),
    secret: p.string().length(200),
    maxRetries: p.integer(),
    headers: p.json<Record<string, string>>(),
    auth: p.json<WebhookAuth>().nullable(),
    active: p.boolean(),
    /** Still signed with until previousSecretExpiresAt. */
    previousSecret: p.string().length(200).nullable(),
    previousSecretExpiresAt: p.datetime().nullable(),
    /** Consecutive deliveries that ended failed, and since when. */
    consecutiveFailures: p.integer().default(0),
    failingSince: p.datetime().nullable(),
    /** Set when disabled automatically; cleared on re-enabling. */
    disabledAt: p.datetime().nullable(),
    disabledReason: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    deletedAt: p.datetime().nullable(),
  },
});
export type Subscription = InferEntity<typeof Subscription>;
