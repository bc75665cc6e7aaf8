import { defineEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';

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
  },
  indexes: [{ name: 'outbox_unpublished_idx', properties: ['id'], options: { where: 'published_at is null' } }],
});

export interface EventToRecord {
  companyId: string;
  eventKey: string;
  payload: Record<string, unknown>;
}

/** The message on JetStream: the spec's envelope plus the routing facts the webhooks service needs. */
export interface EventMessage {
  event_id: string;
  event_key: string;
  company_id: string;
  occurred_at: string;
  payload: Record<string, unknown>;
}

export const outboxChannel = (schema: string) => `outbox_${schema}`;

/**
 * Adds events to the outbox inside the caller's transaction (they are flushed with it) and wakes the
 * relay when the transaction commits. Returns the event ids.
 */
export async function recordEvents(em: EntityManager, schema: string, events: EventToRecord[]): Promise<string[]> {
  if (!events.length) return [];
  const occurredAt = new Date();
  const ids = events.map((event) => {
    const id = uuidv7();
    em.create(OutboxEvent, { id, ...event, occurredAt, publishedAt: null });
    return id;
  });
  await em.execute('select pg_notify(?, ?)', [outboxChannel(schema), '']);
  return ids;
}
