import { definedColumns, run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import { Subscription } from './subscription.entity.js';

/** The statements of subscriptions (decision 0201): columns from the Subscription entity's definition. */

type Db = Pool | PoolClient;

/** The columns of `subscriptions` (test/columns.test.ts checks them against the ORM's). */
export const SUBSCRIPTION_COLUMNS = definedColumns(Subscription);

/** The columns of a subscription that a delivery captures. */
const CAPTURED = [
  'id',
  'companyId',
  'url',
  'events',
  'secret',
  'previousSecret',
  'previousSecretExpiresAt',
  'headers',
  'auth',
  'maxRetries',
] as const;
export type CapturedSubscription = Pick<Subscription, (typeof CAPTURED)[number]>;

const issuing = statement(
  'webhooks-issue-subscriptions',
  `select ${SUBSCRIPTION_COLUMNS.filter((c) => (CAPTURED as readonly string[]).includes(c.property))
    .map((c) => `${c.column} as "${c.property}"`)
    .join(', ')}
         from subscriptions where company_id = any($1::uuid[]) and active and deleted_at is null`,
);

/** The active subscriptions of these companies, as deliveries capture them. */
export async function activeSubscriptionsOf(db: Db, companyIds: string[]): Promise<CapturedSubscription[]> {
  return run<CapturedSubscription>(db, issuing, [companyIds]);
}
