import type { EntityManager } from '@svc/platform/db/orm';
import type { ServiceContext } from '@svc/platform/service';
import { v7 as uuidv7 } from 'uuid';
import { Delivery, DeliveryAttempt } from './delivery.entity.js';
import { type AttemptResult, nextWaitMs, RETRY_BASE_MS, type WebhookSender } from './sender.js';

// Longer than one attempt (30 s) can take, so a live sender never loses its lease; a dead one delays a delivery this long.
const LEASE_MS = 40_000;

interface DispatcherOptions {
  /** Deliveries in flight in this process. */
  concurrency: number;
  /** Deliveries of one subscription in flight at once, over every replica (counted from the leases). */
  perSubscription: number;
  /** The first retry wait; later ones double. */
  retryBaseMs?: number;
  health?: HealthPolicy;
  idlePollMs?: number;
}

/** When a subscription whose deliveries keep failing is disabled. */
export interface HealthPolicy {
  /** Consecutive deliveries that ended failed; 0 never disables. */
  disableAfterFailures: number;
  /** And failing for at least this long (since the first of them ended). */
  disableAfterMs: number;
}

export function shouldDisable(consecutiveFailures: number, failingSince: Date, now: Date, policy: HealthPolicy): boolean {
  return (
    policy.disableAfterFailures > 0 &&
    consecutiveFailures >= policy.disableAfterFailures &&
    now.getTime() - failingSince.getTime() >= policy.disableAfterMs
  );
}

/**
 * Sends due deliveries from Postgres. A delivery is leased while it is in flight, so a crashed process
 * only delays it until the lease runs out; the result and the attempt are committed together.
 */
export class Dispatcher {
  private running = false;
  private inflight = 0;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private readonly sends = new Set<Promise<void>>();

  constructor(
    private readonly ctx: ServiceContext,
    private readonly sender: WebhookSender,
    private readonly o: DispatcherOptions,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    await Promise.all(this.sends);
  }

  private async run(): Promise<void> {
    while (this.running) {
      const free = this.o.concurrency - this.inflight;
      let claimed: Delivery[] = [];
      if (free > 0) {
        try {
          claimed = await this.claim(free);
        } catch (err) {
          this.ctx.logger.warn({ err: (err as Error).message }, 'could not claim deliveries');
        }
      }
      for (const d of claimed) this.track(this.send(d));
      if (claimed.length && claimed.length === free) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.o.idlePollMs ?? 500);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  private track(p: Promise<void>): void {
    this.inflight++;
    this.sends.add(p);
    p.finally(() => {
      this.inflight--;
      this.sends.delete(p);
      this.wake();
    });
  }

  /**
   * Leases up to `limit` due deliveries, oldest first, but no more of one subscription than its free slots:
   * the per-subscription limit minus its deliveries leased now (by any replica), so a slow receiver cannot
   * take every slot. Claims of all replicas take turns on an advisory lock, so each counts the leases the
   * previous claims committed.
   */
  private async claim(limit: number): Promise<Delivery[]> {
    return this.ctx.orm.em.fork().transactional(async (tx) => {
      await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`${this.ctx.schema}:claim-deliveries`]);
      const rows = await tx.execute<Record<string, unknown>[]>(
        `with in_flight as (
           select subscription_id, count(*) as n from deliveries
            where status = 'pending' and lease_until >= now()
            group by subscription_id),
         due as (
           select id, subscription_id, next_attempt_at,
                  row_number() over (partition by subscription_id order by next_attempt_at, id) as rank
             from deliveries
            where status = 'pending' and next_attempt_at <= now() and (lease_until is null or lease_until < now())),
         chosen as (
           select due.id from due left join in_flight using (subscription_id)
            where due.rank <= ? - coalesce(in_flight.n, 0)
            order by due.next_attempt_at, due.id limit ?)
         update deliveries d set lease_until = now() + make_interval(secs => ?)
           from chosen where d.id = chosen.id
         returning d.*`,
        [this.o.perSubscription, limit, LEASE_MS / 1000],
      );
      return rows.map((r) => tx.map(Delivery, r));
    });
  }

  private async send(delivery: Delivery): Promise<void> {
    const result = await this.sender.attempt(delivery);
    try {
      await this.record(delivery, result);
    } catch (err) {
      // The lease runs out and the delivery is sent again: at least once, never lost.
      this.ctx.logger.error({ err: (err as Error).message, delivery: delivery.id }, 'could not record an attempt');
    }
  }

  private async record(delivery: Delivery, result: AttemptResult): Promise<void> {
    const em = this.ctx.orm.em.fork();
    const now = new Date();
    const attempts = delivery.attemptCount + 1;
    let status: Delivery['status'] = 'pending';
    let nextAttemptAt: Date | null = null;
    if (result.outcome === 'succeeded') status = 'succeeded';
    else if (result.outcome === 'failed' || attempts > delivery.maxRetries) status = 'failed';
    else
      nextAttemptAt = new Date(
        now.getTime() + nextWaitMs(attempts, result.retryAfterSeconds, Math.random, this.o.retryBaseMs ?? RETRY_BASE_MS),
      );
    await em.transactional(async (tx) => {
      tx.create(DeliveryAttempt, {
        id: uuidv7(),
        companyId: delivery.companyId,
        deliveryId: delivery.id,
        at: now,
        statusCode: result.statusCode,
        error: result.error,
        durationMs: result.durationMs,
      });
      await tx.nativeUpdate(
        Delivery,
        { id: delivery.id },
        {
          status,
          attemptCount: attempts,
          nextAttemptAt,
          leaseUntil: null,
          updatedAt: now,
          completedAt: status === 'pending' ? null : now,
        },
      );
      if (status !== 'pending') await this.recordHealth(tx, delivery, status === 'succeeded', result, now);
    });
  }

  /**
   * The subscription's run of deliveries that ended failed: any success ends it; a long enough run disables
   * the subscription (new events stop being issued to it until an operator re-enables it).
   */
  private async recordHealth(tx: EntityManager, delivery: Delivery, succeeded: boolean, result: AttemptResult, now: Date): Promise<void> {
    if (succeeded) {
      // Most successes change nothing; skipping the write keeps the subscription row free of contention.
      await tx.execute(
        'update subscriptions set consecutive_failures = 0, failing_since = null where id = ? and (consecutive_failures <> 0 or failing_since is not null)',
        [delivery.subscriptionId],
      );
      return;
    }
    const [run] = await tx.execute<{ consecutive_failures: number; failing_since: Date; active: boolean; deleted_at: Date | null }[]>(
      `update subscriptions set consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, ?)
        where id = ? returning consecutive_failures, failing_since, active, deleted_at`,
      [now, delivery.subscriptionId],
    );
    const policy = this.o.health;
    if (!run || !policy || !run.active || run.deleted_at) return;
    const since = new Date(run.failing_since);
    if (!shouldDisable(run.consecutive_failures, since, now, policy)) return;
    const reason =
      `disabled after ${run.consecutive_failures} consecutive failed deliveries since ${since.toISOString()}; ` +
      `last error: ${result.error ?? `HTTP ${result.statusCode}`}`;
    await tx.execute('update subscriptions set active = false, disabled_at = ?, disabled_reason = ?, updated_at = ? where id = ?', [
      now,
      reason,
      now,
      delivery.subscriptionId,
    ]);
    this.ctx.logger.warn({ subscription: delivery.subscriptionId, reason }, 'webhook subscription disabled');
  }
}
