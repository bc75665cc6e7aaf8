import { defineEntity, p } from '@mikro-orm/core';

/**
 * The transactional outbox every service owns (in its own schema). A state change and its events are
 * written in one transaction; the relay publishes them to JetStream afterwards.
 */
export const OutboxEvent = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    eventKey: p.string().length(100),
    payload: p.json<Record<string, unknown>>(),
    occurredAt: p.datetime(),
    publishedAt: p.datetime().nullable(),
    /** The request that wrote the event, when it was traced: the relay's publish continues its trace (decision 0200). */
    traceparent: p.string().length(55).nullable(),
  },
  indexes: [{ name: 'outbox_unpublished_idx', properties: ['id'], options: { where: 'published_at is null' } }],
});
