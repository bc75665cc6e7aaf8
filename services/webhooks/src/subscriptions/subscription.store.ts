import { type DefinedColumn, definedColumns, inSnapshot, run, type Statement, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import { boundValues, entityOfRow } from '../deliveries/delivery.columns.js';
import { Subscription } from './subscription.entity.js';

/** Decision 0201. */

type Db = Pool | PoolClient;

/** test/columns.test.ts checks them against the ORM's. */
export const SUBSCRIPTION_COLUMNS = definedColumns(Subscription);

const COLUMNS = SUBSCRIPTION_COLUMNS.map((c) => c.column).join(', ');
const subscriptionOfRow = (r: Record<string, unknown>) => entityOfRow<Subscription>(SUBSCRIPTION_COLUMNS, r);

const insert = statement(
  'webhooks-subscription-insert',
  `insert into subscriptions (${COLUMNS}) values (${SUBSCRIPTION_COLUMNS.map((c, i) => `$${i + 1}::${c.pgType}`).join(', ')})`,
);

export async function insertSubscription(db: Db, s: Subscription): Promise<void> {
  await run(db, insert, boundValues(SUBSCRIPTION_COLUMNS, s));
}

const find = statement(
  'webhooks-subscription-find',
  `select ${COLUMNS} from subscriptions where company_id = $1 and id = $2 and deleted_at is null`,
);

/** Unless deleted. */
export async function findSubscription(db: Db, companyId: string, id: string): Promise<Subscription | null> {
  const [row] = await run(db, find, [companyId, id]);
  return row ? subscriptionOfRow(row) : null;
}

const UPDATABLE = SUBSCRIPTION_COLUMNS.filter((c) => c.property !== 'id' && c.property !== 'companyId');
/** One statement per set of columns written, named by a bitmask. */
const updates = new Map<number, Statement>();
const updateOf = (columns: DefinedColumn[]) => {
  const set = columns.reduce((bits, c) => bits | (1 << UPDATABLE.indexOf(c)), 0);
  let st = updates.get(set);
  if (!st) {
    const assign = columns.map((c, i) => `${c.column} = $${i + 3}::${c.pgType}`).join(', ');
    st = statement(
      `webhooks-subscription-update-${set.toString(16)}`,
      `update subscriptions set ${assign} where company_id = $1 and id = $2`,
    );
    updates.set(set, st);
  }
  return st;
};
const same = (c: DefinedColumn, a: unknown, b: unknown) =>
  c.pgType === 'jsonb'
    ? JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
    : a instanceof Date && b instanceof Date
      ? a.getTime() === b.getTime()
      : (a ?? null) === (b ?? null);

/** Only the columns that differ from `read`: the health counters the delivery path keeps stay as they are. */
export async function updateSubscription(db: Db, read: Subscription, next: Subscription): Promise<void> {
  const changed = UPDATABLE.filter((c) => !same(c, read[c.property as keyof Subscription], next[c.property as keyof Subscription]));
  if (!changed.length) return;
  await run(db, updateOf(changed), [next.companyId, next.id, ...boundValues(changed, next)]);
}

const page = statement(
  'webhooks-subscription-page',
  `select ${COLUMNS} from subscriptions
    where company_id = $1 and deleted_at is null and ($2::timestamptz is null or created_at > $2 or (created_at = $2 and id > $3::uuid))
    order by created_at asc, id asc offset $4 limit $5`,
);
const count = statement(
  'webhooks-subscription-count',
  'select count(*)::int as n from subscriptions where company_id = $1 and deleted_at is null',
);

/** Oldest first. */
export async function subscriptionPage(
  db: Db,
  companyId: string,
  { after, skip, take }: { after?: { createdAt: Date; id: string } | undefined; skip: number; take: number },
): Promise<Subscription[]> {
  return (await run(db, page, [companyId, after?.createdAt ?? null, after?.id ?? null, skip, take])).map(subscriptionOfRow);
}

export async function countSubscriptions(db: Db, companyId: string): Promise<number> {
  return (await run<{ n: number }>(db, count, [companyId]))[0]?.n ?? 0;
}

/** A page of a company's subscriptions and their total, in one snapshot (decision 0259). */
export function subscriptionList(
  pool: Pool,
  companyId: string,
  at: { after?: { createdAt: Date; id: string } | undefined; skip: number; take: number },
): Promise<{ records: Subscription[]; total: number }> {
  return inSnapshot(pool, async (client) => ({
    records: await subscriptionPage(client, companyId, at),
    total: await countSubscriptions(client, companyId),
  }));
}

const ids = statement('webhooks-subscription-ids', 'select id from subscriptions where company_id = $1');

/** Deleted ones too. */
export async function subscriptionIdsOf(db: Db, companyId: string): Promise<string[]> {
  return (await run<Pick<Subscription, 'id'>>(db, ids, [companyId])).map((r) => r.id);
}
