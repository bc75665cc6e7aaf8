import { defineEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { afterCommit } from '../db/native.js';
import { currentTraceparent } from '../tracing.js';
import type { EventToRecord } from './payloads.js';

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

export type { EventToRecord } from './payloads.js';

/** The message on JetStream: the spec's envelope plus the routing facts the webhooks service needs. */
export interface EventMessage {
  event_id: string;
  event_key: string;
  company_id: string;
  occurred_at: string;
  payload: Record<string, unknown>;
}

/** This process's relays, by schema (decision 0033). */
const relaysOf = new Map<string, Set<() => void>>();

/** Registers a relay's wake-up for events committed by this process; returns how to unregister it. */
export function onEventsCommitted(schema: string, wake: () => void): () => void {
  const set = relaysOf.get(schema) ?? new Set<() => void>();
  relaysOf.set(schema, set);
  set.add(wake);
  return () => void set.delete(wake);
}

/** Events of `schema` were just committed by this process: its relays publish them now (decision 0033). */
export function eventsCommitted(schema: string): void {
  for (const wake of relaysOf.get(schema) ?? []) wake();
}

/**
 * Events were written to the outbox of `schema` on `db`: its relay is woken once they are committed (after the
 * transaction inTransaction has open on `db`, or at once for an autocommit statement on the pool). In place of a
 * `pg_notify` in the transaction: Postgres wakes every listening session of the database on each notifying commit,
 * whatever its channel, and serializes notifying commits database-wide (decision 0033).
 */
export function eventsRecorded(db: Pick<PoolClient, 'query'>, schema: string): void {
  afterCommit(db, () => eventsCommitted(schema));
}

/** Schemas whose events an EntityManager recorded, to wake their relays when its transaction commits. */
const recordedBy = new WeakMap<EntityManager, Set<string>>();
const watched = new WeakSet<object>();

const isSavepoint = (transaction: unknown) => typeof transaction === 'object' && transaction !== null && 'savepointName' in transaction;

/** Wakes the relays once the transaction of an EntityManager that recorded events commits (not a savepoint). */
function watchCommits(em: EntityManager): void {
  const events = em.getEventManager();
  if (watched.has(events)) return;
  watched.add(events);
  events.registerSubscriber({
    afterTransactionCommit: async ({ em: committed, transaction }) => {
      // A savepoint's release commits nothing yet. (Events recorded in a nested transaction are therefore found by the
      // relay's sweep, not woken: record them on the outermost transaction's EntityManager.)
      if (isSavepoint(transaction)) return;
      const schemas = recordedBy.get(committed as EntityManager);
      if (!schemas) return;
      recordedBy.delete(committed as EntityManager);
      for (const schema of schemas) eventsCommitted(schema);
    },
    afterTransactionRollback: async ({ em: rolledBack, transaction }) => {
      if (isSavepoint(transaction)) return;
      recordedBy.delete(rolledBack as EntityManager);
    },
  });
}

/**
 * Adds events to the outbox inside the caller's transaction (they are flushed with it) and wakes this process's
 * relay when the transaction commits. Returns the event ids. No plan check: a service records through
 * `ctx.outbox.record(em, events)` (OutboxWriter, decision 0090), which applies its plan gate and then calls this.
 */
export async function recordEvents(em: EntityManager, schema: string, events: readonly EventToRecord[]): Promise<string[]> {
  if (!events.length) return [];
  const occurredAt = new Date();
  const traceparent = currentTraceparent();
  const ids = events.map((event) => {
    const id = uuidv7();
    const { companyId, eventKey, payload } = event;
    em.create(OutboxEvent, {
      id,
      companyId,
      eventKey,
      payload: payload as Record<string, unknown>,
      occurredAt,
      publishedAt: null,
      traceparent: traceparent ?? null,
    });
    return id;
  });
  watchCommits(em);
  const schemas = recordedBy.get(em) ?? new Set<string>();
  schemas.add(schema);
  recordedBy.set(em, schemas);
  return ids;
}
