import type { PoolClient } from 'pg';
import { afterCommit } from '../db/native.js';

export type { EventToRecord } from './payloads.js';

/** The spec's envelope plus the routing facts the webhooks service needs. */
export interface EventMessage {
  event_id: string;
  event_key: string;
  company_id: string;
  occurred_at: string;
  payload: Record<string, unknown>;
}

export interface OutboxRow {
  id: string;
  company_id: string;
  event_key: string;
  /** As Postgres prints the jsonb, or parsed. */
  payload: Record<string, unknown> | string;
  occurred_at: Date | string;
  traceparent?: string | null;
}

/** By schema (decision 0033). */
const relaysOf = new Map<string, Set<() => void>>();

export function onEventsCommitted(schema: string, wake: () => void): () => void {
  const set = relaysOf.get(schema) ?? new Set<() => void>();
  relaysOf.set(schema, set);
  set.add(wake);
  return () => void set.delete(wake);
}

export function eventsCommitted(schema: string): void {
  for (const wake of relaysOf.get(schema) ?? []) wake();
}

/**
 * Wakes the relay once committed, in place of a `pg_notify`: Postgres wakes every listening session on each notifying
 * commit and serializes notifying commits database-wide (decision 0033).
 */
export function eventsRecorded(db: Pick<PoolClient, 'query'>, schema: string): void {
  afterCommit(db, () => eventsCommitted(schema));
}
