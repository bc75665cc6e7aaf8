import type { PoolClient } from 'pg';
import { afterCommit } from '../db/native.js';

export type { EventToRecord } from './payloads.js';

/** The message on JetStream: the spec's envelope plus the routing facts the webhooks service needs. */
export interface EventMessage {
  event_id: string;
  event_key: string;
  company_id: string;
  occurred_at: string;
  payload: Record<string, unknown>;
}

/** The columns of an outbox row that make its JetStream message. */
export interface OutboxRow {
  id: string;
  company_id: string;
  event_key: string;
  /** The payload as Postgres prints the jsonb (`payload::text`), or parsed. */
  payload: Record<string, unknown> | string;
  occurred_at: Date | string;
  /** The `traceparent` of the request that wrote the row, when it was traced (decision 0200). */
  traceparent?: string | null;
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
