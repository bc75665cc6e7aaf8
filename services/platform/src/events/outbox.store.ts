import type { MikroORM } from '@mikro-orm/postgresql';
import type { PoolClient } from 'pg';
import { inTransactionFrom, nativePool, type ServerStatement } from '../db/native.js';
import { currentTraceparent } from '../tracing.js';
import type { OutboxRow } from './outbox.js';

/**
 * The only platform code that touches the outbox table. Statement names carry the schema, a prepared statement being
 * per connection and name.
 */

export async function anyUnpublished(orm: MikroORM, schema: string): Promise<boolean> {
  const { rows } = await (await nativePool(orm)).query({
    name: `outbox-relay-any-${schema}`,
    text: `select 1 from "${schema}".outbox where published_at is null limit 1`,
  });
  return rows.length > 0;
}

/**
 * Returns how many rows it claimed. The marks commit only once `publish` resolved: other relays skip the rows
 * meanwhile, and a failure rolls them back (the stream's duplicate window drops the copies).
 */
export async function claimUnpublished(
  orm: MikroORM,
  schema: string,
  limit: number,
  publish: (rows: OutboxRow[]) => Promise<void>,
): Promise<number> {
  // BEGIN travels with the claim: a batch costs two round trips, the claim and the COMMIT (decision 0231).
  return inTransactionFrom<OutboxRow, number>(await nativePool(orm), claimStatement(schema), [limit], async (_client, rows) => {
    if (rows.length) await publish(rows);
    return rows.length;
  });
}

/** No WAL flush wait: a lost mark only republishes, and JetStream drops the copies (decision 0034). */
const claimStatement = (schema: string): ServerStatement => ({
  name: `outbox-relay-claim-begun-${schema}`,
  params: ['int'],
  text: `update "${schema}".outbox o set published_at = now()
           from (select set_config('synchronous_commit', 'off', true)) async_commit
          where o.id in (select id from "${schema}".outbox
                          where published_at is null order by id limit $1 for update skip locked)
          returning o.id, o.company_id, o.event_key, o.payload::text as payload, o.occurred_at, o.traceparent`,
});

/** Walks the time-ordered primary key up to `cutoffId`, so it needs no index; rows another replica deletes are skipped. */
export async function deletePublishedBefore(orm: MikroORM, schema: string, cutoffId: string, cutoff: Date, limit: number): Promise<number> {
  const table = `"${schema}".outbox`;
  const { rows } = await (await nativePool(orm)).query<{ n: string }>({
    name: `outbox-prune-${schema}`,
    text: `with expired as (
             select id from ${table}
              where id < $1::uuid and published_at is not null and published_at < $2
              order by id limit $3 for update skip locked),
           deleted as (delete from ${table} o using expired where o.id = expired.id returning 1)
           select count(*) as n from deleted`,
    values: [cutoffId, cutoff, limit],
  });
  return Number(rows[0]?.n ?? 0);
}

export async function unpublishedStatus(orm: MikroORM, schema: string): Promise<{ pending: number; oldest: Date | null }> {
  const { rows } = await (await nativePool(orm)).query<{ pending: string; oldest: Date | null }>({
    name: `outbox-status-${schema}`,
    text: `select count(*) as pending, min(occurred_at) as oldest from "${schema}".outbox where published_at is null`,
  });
  return { pending: Number(rows[0]?.pending ?? 0), oldest: rows[0]?.oldest ?? null };
}

/** Ids in (`afterId`, `beforeId`), occurred in [since, until), in id order. */
export async function companyRowsBetween(
  orm: MikroORM,
  schema: string,
  o: { companyId: string; afterId: string; beforeId: string; since: Date; until: Date; limit: number },
): Promise<(OutboxRow & { published_at: Date | null })[]> {
  const { rows } = await (await nativePool(orm)).query<OutboxRow & { published_at: Date | null }>({
    name: `outbox-replay-${schema}`,
    text: `select id, company_id, event_key, payload::text as payload, occurred_at, published_at from "${schema}".outbox
            where id > $1::uuid and id < $2::uuid and company_id = $3 and occurred_at >= $4 and occurred_at < $5
            order by id limit $6`,
    values: [o.afterId, o.beforeId, o.companyId, o.since, o.until, o.limit],
  });
  return rows;
}

export async function insertEvents(
  db: Pick<PoolClient, 'query'>,
  statement: { name: string; text: string },
  events: { id: string; company_id: string; event_key: string; payload: unknown }[],
  at: Date,
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({ ...statement, values: eventValues(events, at) });
  return rows.map((r) => r.id);
}

/** The values of an outbox insert: the events as one JSON array, their time, the current trace. */
export const eventValues = (events: { id: string; company_id: string; event_key: string; payload: unknown }[], at: Date) => [
  JSON.stringify(events),
  at,
  currentTraceparent() ?? null,
];
