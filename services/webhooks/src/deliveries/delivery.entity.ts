import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export type WebhookAuth =
  | { type: 'basic'; username: string; password: string }
  | { type: 'bearer'; token: string }
  | { type: 'api_key'; header: string; value: string };

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** Captured when the event was issued. */
export interface CapturedConfig {
  secret: string;
  /** During a rotation: also signed with until it expires (ISO time). */
  previousSecret?: string | null;
  previousSecretExpiresAt?: string | null;
  headers: Record<string, string>;
  auth: WebhookAuth | null;
}

export const Delivery = defineEntity({
  name: 'Delivery',
  tableName: 'deliveries',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    subscriptionId: p.uuid(),
    eventId: p.string().length(100),
    eventKey: p.string().length(100),
    url: p.text(),
    config: p.json<CapturedConfig>(),
    /** Exact bytes sent on every attempt: the signature covers them. */
    body: p.text(),
    status: p.string().length(20),
    attemptCount: p.integer(),
    maxRetries: p.integer(),
    nextAttemptAt: p.datetime().nullable(),
    leaseUntil: p.datetime().nullable(),
    /** Only the holder renews the lease and records the attempt. */
    leaseOwner: p.uuid().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    completedAt: p.datetime().nullable(),
    /** Each attempt's span is its child (decision 0200). */
    traceparent: p.string().length(55).nullable(),
  },
  uniques: [{ name: 'deliveries_subscription_event_unique', properties: ['subscriptionId', 'eventId'] }],
  indexes: [
    { name: 'deliveries_subscription_created_idx', properties: ['subscriptionId', 'createdAt'] },
    // The claim's per-subscription look-ups: queued deliveries, and leased ones (in flight or held by a dead process).
    { name: 'deliveries_queued_idx', properties: ['subscriptionId', 'nextAttemptAt', 'id'] },
    { name: 'deliveries_leased_subscription_idx', properties: ['subscriptionId', 'leaseUntil'] },
  ],
});
export type Delivery = InferEntity<typeof Delivery>;

export const DeliveryAttempt = defineEntity({
  name: 'DeliveryAttempt',
  tableName: 'delivery_attempts',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    deliveryId: p.uuid().index(),
    at: p.datetime(),
    statusCode: p.integer().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer(),
    /** The start of the receiver's answer. */
    responseBody: p.text().nullable(),
  },
});
export type DeliveryAttempt = InferEntity<typeof DeliveryAttempt>;
