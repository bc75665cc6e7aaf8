import type { ServiceContext } from '@svc/platform/service';
import { v7 as uuidv7 } from 'uuid';
import { Delivery, DeliveryAttempt } from './delivery.entity.js';
import { type AttemptResult, nextWaitMs, type WebhookSender } from './sender.js';

// Longer than one attempt (30 s) can take, so a live sender never loses its lease; a dead one delays a delivery this long.
const LEASE_MS = 40_000;

interface DispatcherOptions {
  concurrency: number;
  idlePollMs?: number;
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

  private async claim(limit: number): Promise<Delivery[]> {
    const em = this.ctx.orm.em.fork();
    const rows = await em.execute<Record<string, unknown>[]>(
      `update deliveries set lease_until = now() + make_interval(secs => ?)
        where id in (
          select id from deliveries
           where status = 'pending' and next_attempt_at <= now() and (lease_until is null or lease_until < now())
           order by next_attempt_at limit ? for update skip locked)
        returning *`,
      [LEASE_MS / 1000, limit],
    );
    return rows.map((r) => em.map(Delivery, r));
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
    else nextAttemptAt = new Date(now.getTime() + nextWaitMs(attempts, result.retryAfterSeconds));
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
    });
  }
}
