import { defineEntity, p } from '@mikro-orm/core';

/** Every service owns one in its schema: a state change and its events are written in one transaction. */
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
    /** The relay's publish continues this trace (decision 0200). */
    traceparent: p.string().length(55).nullable(),
  },
  indexes: [{ name: 'outbox_unpublished_idx', properties: ['id'], options: { where: 'published_at is null' } }],
});
