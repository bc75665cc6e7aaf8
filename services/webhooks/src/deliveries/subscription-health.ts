import type { OutboxWriter } from '@svc/platform/events/writer';
import type { Logger } from '@svc/platform/logging';
import type { PoolClient } from 'pg';
import { disableSubscription, extendFailureRun, resetFailureRun } from './delivery.store.js';
import type { AttemptResult } from './sender.js';

export interface HealthPolicy {
  /** Consecutive deliveries that ended failed; 0 never disables. */
  disableAfterFailures: number;
  /** And failing for at least this long. */
  disableAfterMs: number;
}

export function shouldDisable(consecutiveFailures: number, failingSince: Date, now: Date, policy: HealthPolicy): boolean {
  return (
    policy.disableAfterFailures > 0 &&
    consecutiveFailures >= policy.disableAfterFailures &&
    now.getTime() - failingSince.getTime() >= policy.disableAfterMs
  );
}

export interface EndedAttempt {
  at: Date;
  result: AttemptResult;
  succeeded: boolean;
}

/** Standard Webhooks: ends the subscription at once. */
export const GONE = 410;

/**
 * A long enough failure run, or a 410, disables the subscription and issues `webhook.disabled` in the same
 * transaction. `ended`: this batch's ended deliveries, in finishing order.
 */
export async function recordHealth(
  client: PoolClient,
  subscriptionId: string,
  ended: EndedAttempt[],
  policy: HealthPolicy | undefined,
  logger: Logger,
  outbox?: OutboxWriter,
): Promise<void> {
  let lastSuccess = -1;
  ended.forEach((e, i) => {
    if (e.succeeded) lastSuccess = i;
  });
  const failures = ended.slice(lastSuccess + 1);
  if (!failures.length) return resetFailureRun(client, subscriptionId);
  const first = failures[0]!;
  const last = failures[failures.length - 1]!;
  const run = await extendFailureRun(client, subscriptionId, failures.length, first.at, lastSuccess >= 0);
  if (!run?.active || run.deletedAt) return;
  const since = run.failingSince;
  const gone = failures.find((f) => f.result.statusCode === GONE);
  const now = gone?.at ?? last.at;
  let reason: string;
  if (gone) reason = `disabled: the receiver answered 410 Gone at ${now.toISOString()}`;
  else if (policy && shouldDisable(run.consecutiveFailures, since, now, policy))
    reason =
      `disabled after ${run.consecutiveFailures} consecutive failed deliveries since ${since.toISOString()}; ` +
      `last error: ${last.result.error ?? `HTTP ${last.result.statusCode}`}`;
  else return;
  await disableSubscription(client, subscriptionId, now, reason);
  // The counter update locked the row, so only the transaction that disabled it issues the event.
  await outbox?.write(client, [
    {
      companyId: run.companyId,
      eventKey: 'webhook.disabled',
      payload: {
        webhook: { id: subscriptionId, url: run.url, description: run.description },
        reason: gone ? 'gone' : 'failing',
        disabled_reason: reason,
        disabled_at: now.toISOString(),
      },
    },
  ]);
  logger.warn({ subscription: subscriptionId, reason }, 'webhook subscription disabled');
}
