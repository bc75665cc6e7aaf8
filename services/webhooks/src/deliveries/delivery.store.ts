import { inSnapshot, run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import {
  ATTEMPT_COLUMNS,
  attemptColumn,
  boundValues,
  DELIVERY_COLUMNS,
  deliveryColumn,
  deliveryOfRow,
  entityOfRow,
} from './delivery.columns.js';
import type { CapturedConfig, Delivery, DeliveryAttempt } from './delivery.entity.js';
import type { DeliveryCounts } from './delivery.metrics.js';
import { deliveryId } from './delivery-ids.js';

/** Statements of the delivery path, with the subscription health it keeps in the same transaction (decisions 0201, 0213), then the delivery log's. */

export type Db = Pool | PoolClient;

/** Same in every row: `$1` is now, `$5` the lease in seconds, `$6` its holder. */
const SAME_IN_EVERY_ROW: Partial<Record<keyof Delivery, string>> = {
  status: "'pending'",
  attemptCount: '0',
  nextAttemptAt: '$1::timestamptz',
  leaseUntil: 'case when leased then now() + make_interval(secs => $5::float8) end',
  leaseOwner: 'case when leased then $6::uuid end',
  createdAt: '$1::timestamptz',
  updatedAt: '$1::timestamptz',
  completedAt: 'null',
};
/** What an event brings to each of its deliveries; the rest comes from the subscription it matched. */
const FROM_EVENT = ['eventId', 'eventKey', 'companyId', 'body', 'traceparent'] as const;
const EVENT_RECORD = FROM_EVENT.map((p) => `${deliveryColumn(p).column} ${deliveryColumn(p).pgType}`).join(', ');
/**
 * The subscription as it is now, captured into the delivery (decision 0232); `config` is the CapturedConfig the
 * dispatcher signs with, the expiry as JavaScript's toISOString() writes it.
 */
const FROM_SUBSCRIPTION: Partial<Record<keyof Delivery, string>> = {
  subscriptionId: 's.id',
  url: 's.url',
  maxRetries: 's.max_retries',
  config: `jsonb_build_object('secret', s.secret, 'previousSecret', s.previous_secret,
             'previousSecretExpiresAt', to_char(s.previous_secret_expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'headers', s.headers, 'auth', s.auth)`,
};
/**
 * The n-th delivery of the statement: `$8` (a fresh id of this process) with n added to its last 48 bits, so the
 * ids are unique, time-ordered and increasing in event order, as deliveryId()'s are.
 */
const NTH_ID = `(left($8::text, 24) || lpad(to_hex((('x' || right($8::text, 12))::bit(48)::bigint + n) % 281474976710656), 12, '0'))::uuid`;
const INSERT_COLUMNS = DELIVERY_COLUMNS.map((c) => c.column).join(', ');
const INSERT_SELECT = DELIVERY_COLUMNS.map((c) =>
  c.property === 'id' ? NTH_ID : (SAME_IN_EVERY_ROW[c.property as keyof Delivery] ?? c.column),
).join(', ');

export interface IssueLease {
  /** Over every replica. */
  perSubscription: number;
  /** The slots the dispatcher reserved. */
  reserved: number;
  leaseMs: number;
  owner: string;
}

/**
 * Matches the events against the companies' active subscriptions and inserts their deliveries in one statement, one
 * round trip (decision 0245). The events travel as one JSON array, so the statement is the same for every batch
 * size: prepared once per connection (decision 0230). The claims' lock is taken only when some subscription matched.
 */
const issue = statement(
  'webhooks-issue-matched',
  `with e as (select * from json_to_recordset($7::json) as e(${EVENT_RECORD}, ord int)),
             matched as materialized (
               select e.*, ${Object.entries(FROM_SUBSCRIPTION)
                 .map(([p, sql]) => `${sql} as ${deliveryColumn(p as keyof Delivery & string).column}`)
                 .join(', ')},
                      row_number() over (order by e.ord, s.id) as n
                 from e join subscriptions s
                   on s.company_id = e.company_id and s.company_id = any($2::uuid[]) and s.active and s.deleted_at is null
                  and s.events ? e.event_key),
             slots as materialized (
               select * from lock_delivery_slots(array(select distinct subscription_id from matched), $3::int)
                where exists (select 1 from matched)),
             ranked as (
               select m.*, row_number() over (partition by m.subscription_id order by m.n) <= s.slots as in_slot
                 from matched m join slots s on s.subscription_id = m.subscription_id),
             chosen as (
               select r.*, r.in_slot and count(*) filter (where r.in_slot) over (order by r.n) <= $4::int as leased from ranked r)
           insert into deliveries (${INSERT_COLUMNS})
           select ${INSERT_SELECT}
             from chosen
           on conflict (subscription_id, event_id) do nothing
           returning id, event_id, subscription_id, url, config, max_retries, lease_until is not null as leased`,
);

/** An event the consumer takes, with the exact body its deliveries send. */
export type IssuedEvent = Pick<Delivery, (typeof FROM_EVENT)[number]>;

export interface IssuedRow {
  id: string;
  event_id: string;
  subscription_id: string;
  url: string;
  config: CapturedConfig;
  max_retries: number;
  leased: boolean;
}

/** One statement, its own transaction; leases go as far as subscriptions' limits allow. Returns the rows inserted. */
export async function insertIssued(db: Db, events: IssuedEvent[], now: Date, lease: IssueLease): Promise<IssuedRow[]> {
  // `ord` keeps the order slots are given out.
  const rows = events.map((e, ord) => {
    const row: Record<string, unknown> = { ord };
    for (const p of FROM_EVENT) row[deliveryColumn(p).column] = e[p] ?? null;
    return row;
  });
  return run<IssuedRow>(db, issue, [
    now,
    [...new Set(events.map((e) => e.companyId))],
    lease.perSubscription,
    lease.reserved,
    lease.leaseMs / 1000,
    lease.owner,
    JSON.stringify(rows),
    deliveryId(),
  ]);
}

/** Signed with the subscription's secrets as they are now (decision 0157). */
function withCurrentSecrets(d: Delivery, r: Record<string, unknown>): Delivery {
  if (typeof r.current_secret !== 'string') return d;
  const expires = r.current_previous_secret_expires_at as Date | string | null;
  d.config = {
    ...d.config,
    secret: r.current_secret,
    previousSecret: (r.current_previous_secret as string | null) ?? null,
    previousSecretExpiresAt: expires ? new Date(expires).toISOString() : null,
  };
  return d;
}

/** Oldest first; no more of one subscription than its free slots over every replica. */
export async function claimDeliveries(db: Db, perSubscription: number, limit: number, leaseMs: number, owner: string): Promise<Delivery[]> {
  // claim_deliveries takes the advisory lock and skip-scans per subscription, so each look-up reads only what it
  // takes however long the backlog; one statement and round trip.
  const { rows } = await db.query({
    name: 'webhooks-claim-deliveries',
    text: `with claimed as materialized (select * from claim_deliveries($1, $2, $3, $4))
             select c.*, s.secret as current_secret, s.previous_secret as current_previous_secret,
                    s.previous_secret_expires_at as current_previous_secret_expires_at
               from claimed c left join subscriptions s on s.id = c.subscription_id`,
    values: [perSubscription, limit, leaseMs / 1000, owner],
  });
  return rows.map((r) => withCurrentSecrets(deliveryOfRow(r), r));
}

const deliveryCol = (p: keyof Delivery & string) => deliveryColumn(p).column;

/** Returns the ids `owner` still held. */
export async function renewLeases(db: Db, ids: string[], owner: string, leaseMs: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>({
    name: 'webhooks-renew-leases',
    text: `update deliveries set ${deliveryCol('leaseUntil')} = now() + make_interval(secs => $3::float8)
                where id = any($1::uuid[]) and ${deliveryCol('leaseOwner')} = $2 and status = 'pending'
                returning id`,
    values: [ids, owner, leaseMs / 1000],
  });
  return rows.map((r) => r.id);
}

// An attempt's columns (its `id` travels as `attempt_id`), then the delivery's results.
const RESULT_PROPERTIES = ['status', 'attemptCount', 'nextAttemptAt', 'completedAt'] as const;
const RECORD_ROW = [
  ...ATTEMPT_COLUMNS.map((c) => ({ ...c, as: c.property === 'id' ? 'attempt_id' : c.column })),
  ...RESULT_PROPERTIES.map((p) => ({ ...deliveryColumn(p), as: deliveryColumn(p).column })),
];
const RECORD_UNNEST = RECORD_ROW.map((c, i) => `$${i + 1}::${c.pgType}[]`).join(', ');
const RECORD_AS = RECORD_ROW.map((c) => c.as).join(', ');
const ATTEMPT_LIST = ATTEMPT_COLUMNS.map((c) => c.column).join(', ');
const ATTEMPT_VALUES = RECORD_ROW.slice(0, ATTEMPT_COLUMNS.length)
  .map((c) => c.as)
  .join(', ');
const RESULT_SET = `${RESULT_PROPERTIES.map((p) => `${deliveryCol(p)} = v.${deliveryCol(p)}`).join(', ')}, ${deliveryCol('leaseUntil')} = null, ${deliveryCol('leaseOwner')} = null, ${deliveryCol('updatedAt')} = v.${attemptColumn('at').column}`;
const [SUBSCRIPTIONS_PARAM, COMMIT_MODE_PARAM, OWNER_PARAM] = [RECORD_ROW.length + 1, RECORD_ROW.length + 2, RECORD_ROW.length + 3];

const record = statement(
  'webhooks-record-attempts',
  `with v as (select * from unnest(${RECORD_UNNEST}) as v(${RECORD_AS})),
             commit_mode as (select set_config('synchronous_commit', $${COMMIT_MODE_PARAM}, true)),
             recorded as (
               update deliveries d set ${RESULT_SET}
                 from v, commit_mode
                where d.id = v.${attemptColumn('deliveryId').column} and d.${deliveryCol('leaseOwner')} = $${OWNER_PARAM}::uuid
                returning d.id),
             attempts as (
               insert into delivery_attempts (${ATTEMPT_LIST})
               select ${ATTEMPT_VALUES} from v join recorded r on r.id = v.${attemptColumn('deliveryId').column}),
             health as (
               -- Most successes change nothing; the condition keeps the subscription row free of writes.
               update subscriptions set consecutive_failures = 0, failing_since = null
                where id = any($${SUBSCRIPTIONS_PARAM}::uuid[]) and (consecutive_failures <> 0 or failing_since is not null))
           select id from recorded`,
);

export type AttemptRecord = DeliveryAttempt & Pick<Delivery, (typeof RESULT_PROPERTIES)[number]>;

/**
 * Only where `owner` still holds the lease (decision 0156). `flush`: whether the commit waits for the WAL flush.
 * Returns the ids recorded.
 */
export async function recordAttempts(
  db: Db,
  attempts: AttemptRecord[],
  succeededOnly: string[],
  flush: boolean,
  owner: string,
): Promise<Set<string>> {
  const columns = RECORD_ROW.map((c) => attempts.map((a) => (a as Record<string, unknown>)[c.property]));
  const rows = await run<{ id: string }>(db, record, [...columns, succeededOnly, flush ? 'on' : 'off', owner]);
  return new Set(rows.map((r) => r.id));
}

export interface FailureRun {
  consecutiveFailures: number;
  failingSince: Date;
  active: boolean;
  deletedAt: Date | null;
  companyId: string;
  url: string;
  description: string | null;
}

const RUN = `consecutive_failures as "consecutiveFailures", failing_since as "failingSince", active, deleted_at as "deletedAt",
  company_id as "companyId", url, description`;
const resetRun = statement(
  'webhooks-health-reset',
  'update subscriptions set consecutive_failures = 0, failing_since = null where id = $1 and (consecutive_failures <> 0 or failing_since is not null)',
);
const restartRun = statement(
  'webhooks-health-restart',
  `update subscriptions set consecutive_failures = $1, failing_since = $2 where id = $3 returning ${RUN}`,
);
const extendRun = statement(
  'webhooks-health-extend',
  `update subscriptions set consecutive_failures = consecutive_failures + $1, failing_since = coalesce(failing_since, $2)
    where id = $3 returning ${RUN}`,
);
const disable = statement(
  'webhooks-health-disable',
  'update subscriptions set active = false, disabled_at = $1, disabled_reason = $2, updated_at = $3 where id = $4',
);

/** A no-op write is skipped: most successes change nothing. */
export async function resetFailureRun(db: Db, subscriptionId: string): Promise<void> {
  await run(db, resetRun, [subscriptionId]);
}

/** `restart`: a success came before these failures. Locks the row until the transaction ends. */
export async function extendFailureRun(
  db: Db,
  subscriptionId: string,
  failures: number,
  since: Date,
  restart: boolean,
): Promise<FailureRun | undefined> {
  const [row] = await run<FailureRun>(db, restart ? restartRun : extendRun, [failures, since, subscriptionId]);
  return row && { ...row, failingSince: new Date(row.failingSince), deletedAt: row.deletedAt && new Date(row.deletedAt) };
}

export async function disableSubscription(db: Db, subscriptionId: string, at: Date, reason: string): Promise<void> {
  await run(db, disable, [at, reason, at, subscriptionId]);
}

const counts = statement(
  'webhooks-delivery-counts',
  `select (select count(*) from deliveries
            where status = 'pending' and lease_until is null and attempt_count > 0) as retry_pending,
          (select count(*) from subscriptions s
            where s.deleted_at is null and s.active
              and (s.consecutive_failures > 0 or exists (
                select 1 from deliveries d
                 where d.subscription_id = s.id and d.status = 'pending' and d.lease_until is null and d.attempt_count > 0))
          ) as failing,
          (select count(*) from subscriptions
            where deleted_at is null and disabled_at is not null) as disabled`,
);

export async function deliveryCounts(db: Db): Promise<DeliveryCounts> {
  const [row] = await run<{ retry_pending: string; failing: string; disabled: string }>(db, counts, []);
  return {
    retryPending: Number(row?.retry_pending ?? 0),
    subscriptionsFailing: Number(row?.failing ?? 0),
    subscriptionsDisabled: Number(row?.disabled ?? 0),
  };
}

const insertOne = statement(
  'webhooks-delivery-insert',
  `insert into deliveries (${INSERT_COLUMNS}) values (${DELIVERY_COLUMNS.map((c, i) => `$${i + 1}::${c.pgType}`).join(', ')})`,
);

export async function insertDelivery(db: Db, d: Delivery): Promise<void> {
  await run(db, insertOne, boundValues(DELIVERY_COLUMNS, d));
}

/**
 * Fresh retry budget, queued now. A delivery a sender holds is left alone, so nothing is sent twice at once.
 */
const requeue = (name: string, condition: string) =>
  statement(
    name,
    `update deliveries
          set status = 'pending', attempt_count = 0, next_attempt_at = now(), lease_until = null, completed_at = null, updated_at = now()
        where subscription_id = $1 and company_id = $2 and ${condition}
          and (status <> 'pending' or lease_until is null or lease_until < now())`,
  );
const requeueOne = requeue('webhooks-requeue-delivery', 'id = $3');
const requeueIssued = requeue('webhooks-requeue-issued', 'created_at >= $3 and created_at < $4 and ($5::text is null or status = $5)');

const rowCountOf = async (db: Db, st: { name: string; text: string }, values: unknown[]) =>
  (await db.query({ ...st, values })).rowCount ?? 0;

export const requeueDelivery = (db: Db, companyId: string, subscriptionId: string, id: string) =>
  rowCountOf(db, requeueOne, [subscriptionId, companyId, id]);

/** `status` only when given. */
export const requeueIssuedBetween = (
  db: Db,
  companyId: string,
  subscriptionId: string,
  since: Date,
  until: Date,
  status: Delivery['status'] | null,
) => rowCountOf(db, requeueIssued, [subscriptionId, companyId, since, until, status]);

const redeliver = statement(
  'webhooks-redeliver',
  `update deliveries set status = 'pending', attempt_count = 0, next_attempt_at = $4, lease_until = null, completed_at = null, updated_at = $4
    where id = $1 and subscription_id = $2 and company_id = $3 returning ${INSERT_COLUMNS}`,
);

/** The operator's redelivery: held by a sender or not. */
export async function redeliverNow(db: Db, companyId: string, subscriptionId: string, id: string): Promise<Delivery | null> {
  const [row] = await run(db, redeliver, [id, subscriptionId, companyId, new Date()]);
  return row ? deliveryOfRow(row) : null;
}

const findOne = statement(
  'webhooks-delivery-find',
  `select ${INSERT_COLUMNS} from deliveries where id = $1 and subscription_id = $2 and company_id = $3`,
);

export async function findDelivery(db: Db, companyId: string, subscriptionId: string, id: string): Promise<Delivery | null> {
  const [row] = await run(db, findOne, [id, subscriptionId, companyId]);
  return row ? deliveryOfRow(row) : null;
}

export interface DeliveryFilter {
  status?: Delivery['status'] | undefined;
  eventKey?: string | undefined;
  /** Inclusive. */
  since?: Date | undefined;
  /** Exclusive. */
  until?: Date | undefined;
}

const FILTER = `subscription_id = $1 and company_id = $2 and ($3::text is null or status = $3) and ($4::text is null or event_key = $4)
    and ($5::timestamptz is null or created_at >= $5) and ($6::timestamptz is null or created_at < $6)`;
const page = statement(
  'webhooks-delivery-page',
  `select ${INSERT_COLUMNS} from deliveries
    where ${FILTER} and ($7::timestamptz is null or created_at < $7 or (created_at = $7 and id < $8::uuid))
    order by created_at desc, id desc offset $9 limit $10`,
);
const count = statement('webhooks-delivery-count', `select count(*)::int as n from deliveries where ${FILTER}`);
const filterValues = (companyId: string, subscriptionId: string, f: DeliveryFilter) => [
  subscriptionId,
  companyId,
  f.status ?? null,
  f.eventKey ?? null,
  f.since ?? null,
  f.until ?? null,
];

/** Newest first. */
export async function deliveryPage(
  db: Db,
  companyId: string,
  subscriptionId: string,
  f: DeliveryFilter,
  { before, skip, take }: { before?: { createdAt: Date; id: string } | undefined; skip: number; take: number },
): Promise<Delivery[]> {
  const values = [...filterValues(companyId, subscriptionId, f), before?.createdAt ?? null, before?.id ?? null, skip, take];
  return (await run(db, page, values)).map(deliveryOfRow);
}

export async function countDeliveries(db: Db, companyId: string, subscriptionId: string, f: DeliveryFilter): Promise<number> {
  return (await run<{ n: number }>(db, count, filterValues(companyId, subscriptionId, f)))[0]?.n ?? 0;
}

/**
 * One page of a subscription's delivery log, its total and the page's attempts, read in one snapshot: a delivery
 * inserted meanwhile is in all three or in none (decision 0259).
 */
export function deliveryLog(
  pool: Pool,
  companyId: string,
  subscriptionId: string,
  f: DeliveryFilter,
  at: { before?: { createdAt: Date; id: string } | undefined; skip: number; take: number },
): Promise<{ records: Delivery[]; total: number; attempts: (d: Delivery) => DeliveryAttempt[] }> {
  return inSnapshot(pool, async (client) => {
    const records = await deliveryPage(client, companyId, subscriptionId, f, at);
    const total = await countDeliveries(client, companyId, subscriptionId, f);
    const all = await attemptsOf(
      client,
      records.map((d) => d.id),
    );
    return { records, total, attempts: (d: Delivery) => all.filter((a) => a.deliveryId === d.id) };
  });
}

const attempts = statement(
  'webhooks-delivery-attempts',
  `select ${ATTEMPT_COLUMNS.map((c) => c.column).join(', ')} from delivery_attempts where delivery_id = any($1::uuid[]) order by at asc, id asc`,
);

export async function attemptsOf(db: Db, deliveryIds: string[]): Promise<DeliveryAttempt[]> {
  if (!deliveryIds.length) return [];
  return (await run(db, attempts, [deliveryIds])).map((r) => entityOfRow<DeliveryAttempt>(ATTEMPT_COLUMNS, r));
}

const latest = statement(
  'webhooks-delivery-latest-body',
  `select body from deliveries where subscription_id = any($1::uuid[]) and company_id = $2 and event_key = $3
    order by created_at desc, id desc limit 1`,
);

export async function latestBody(db: Db, companyId: string, subscriptionIds: string[], eventKey: string): Promise<string | null> {
  return (await run<Pick<Delivery, 'body'>>(db, latest, [subscriptionIds, companyId, eventKey]))[0]?.body ?? null;
}
