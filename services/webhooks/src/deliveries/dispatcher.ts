import { randomUUID } from 'node:crypto';
import { inTransaction } from '@svc/platform/db/native';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool } from 'pg';
import type { Delivery } from './delivery.entity.js';
import { type DeliveryMetrics, eventIdTime, statusClass } from './delivery.metrics.js';
import { type AttemptRecord, claimDeliveries, recordAttempts, renewLeases } from './delivery.store.js';
import { deliveryId } from './delivery-ids.js';
import {
  type AttemptLease,
  type AttemptResult,
  LEASE_LOST,
  nextWaitMs,
  RETRY_BASE_MS,
  RETRY_MAX_WAIT_MS,
  type WebhookSender,
  withResolvers,
} from './sender.js';
import { type HealthPolicy, recordHealth } from './subscription-health.js';

// Short and renewed while the attempt runs: a stalled or dead replica holds its deliveries this long at most
// (decision 0156).
export const LEASE_MS = 6_000;
const RENEW_EVERY = 1 / 4;

interface DispatcherOptions {
  concurrency: number;
  /** Over every replica, counted from the leases. */
  perSubscription: number;
  /** Later waits double. */
  retryBaseMs?: number;
  retryMaxWaitMs?: number;
  health?: HealthPolicy;
  /** Finds what nobody told this process about (other replicas' retries, expired leases). */
  idlePollMs?: number;
  /** How long a finished attempt waits for others to be recorded with it, when few are waiting. */
  recordLingerMs?: number;
  leaseMs?: number;
  metrics: DeliveryMetrics;
}

/** From its launch until its attempt is recorded (or given up); the sender's view of the lease. */
class Held implements AttemptLease {
  /** Another process has the lease, or the delivery is no longer pending: nothing is recorded here. */
  lost = false;
  readonly cancel = new AbortController();

  constructor(
    /** performance.now() time, never later than Postgres's lease_until. */
    public leaseEnd: number,
  ) {}

  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  /** A method, not a closure per attempt (decision 0260). */
  held(): boolean {
    return !this.lost && performance.now() < this.leaseEnd;
  }
}

interface Finished {
  delivery: Delivery;
  result: AttemptResult;
  at: Date;
  done: () => void;
}

type Ended = Finished & { succeeded: boolean };

/** So no statement grows without bound. */
const RECORD_BATCH = 500;
const RECORD_WITHOUT_LINGER = 64;

/**
 * Most deliveries come leased from this process's consumer; the rest are claimed from Postgres when one is known to
 * wait, when a retry falls due here, and every `idlePollMs`. Short renewed leases mean a stalled process only delays a
 * delivery, and only the holder records it (decision 0156). A batch's attempts, results and health counters commit in
 * one transaction; a failed one leaves them leased, to be sent again: at least once, never lost.
 */
export class Dispatcher {
  private running = false;
  /** Started and not yet recorded (each holds a lease). */
  private sending = 0;
  /** Promised to the consumer for deliveries it is inserting leased to this process. */
  private reserved = 0;
  /** Set by wake(); cleared by a claim that got less than it asked. */
  private claimable = true;
  private wakeUp: (() => void) | undefined;
  /** A wake that came while the loop was not waiting: the next wait returns at once. */
  private woken = false;
  private loop: Promise<void> | undefined;
  private readonly sends = new Set<Promise<void>>();
  private finished: Finished[] = [];
  private recording: Promise<void> | undefined;
  private roomWaiter: (() => void) | undefined;
  /** The earliest, and its timer (the claim that sends it). */
  private retries: number[] = [];
  private retryAt = Number.POSITIVE_INFINITY;
  private retryTimer: NodeJS.Timeout | undefined;
  /** lease_owner. */
  readonly owner = randomUUID();
  readonly leaseMs: number;
  private readonly held = new Map<string, Held>();
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly pool: () => Promise<Pool>,
    private readonly sender: WebhookSender,
    private readonly o: DispatcherOptions,
  ) {
    this.leaseMs = o.leaseMs ?? LEASE_MS;
  }

  get perSubscription(): number {
    return this.o.perSubscription;
  }

  start(): void {
    this.running = true;
    this.loop = this.run();
    this.renewTimer = setInterval(() => {
      this.renewing ??= this.renew().finally(() => {
        this.renewing = undefined;
      });
    }, this.leaseMs * RENEW_EVERY);
  }

  wake(): void {
    this.claimable = true;
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.retryTimer);
    this.woken = true;
    this.wakeUp?.();
    await this.loop;
    // The attempts still running keep their leases renewed until they are recorded.
    await Promise.all(this.sends);
    clearInterval(this.renewTimer);
    await this.renewing;
  }

  private free(): number {
    return this.running ? this.o.concurrency - this.sending - this.reserved : 0;
  }

  /** When none, resolves once a recorded batch gives some back, or after `maxWaitMs`. */
  room(maxWaitMs: number): Promise<number> {
    const free = this.free();
    if (free > 0 || !this.running) return Promise.resolve(free);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.roomWaiter = undefined;
        resolve(this.free());
      }, maxWaitMs);
      this.roomWaiter = () => {
        clearTimeout(timer);
        this.roomWaiter = undefined;
        setImmediate(() => resolve(this.free()));
      };
    });
  }

  /** While deliveries may be queued in Postgres, at most half the free slots, so claims (oldest first) keep a share. */
  reserve(wanted: number): number {
    const free = this.free();
    const granted = Math.max(0, Math.min(wanted, this.claimable ? Math.ceil(free / 2) : free));
    this.reserved += granted;
    return granted;
  }

  /**
   * The leases are committed; the rest of the slots go back. `queued`: some deliveries were inserted without a lease.
   * `leasedAt`: performance.now() when the leasing statement was sent.
   */
  deliver(reserved: number, leased: Delivery[], queued: boolean, leasedAt: number): void {
    this.reserved -= reserved;
    if (leased.length) this.o.metrics.attemptsStarted.inc({ source: 'issued' }, leased.length);
    for (const d of leased) this.launch(d, leasedAt);
    if (queued) this.wake();
  }

  private async run(): Promise<void> {
    const idle = this.o.idlePollMs ?? 500;
    let lastClaim = 0;
    while (this.running) {
      this.woken = false;
      const free = this.free();
      if (free > 0 && (this.claimable || performance.now() - lastClaim >= idle)) {
        // Cleared before the claim: a wake() while it runs sets it again.
        this.claimable = false;
        lastClaim = performance.now();
        let claimed: Delivery[] = [];
        const claimedAt = performance.now();
        try {
          claimed = await this.claim(free);
        } catch (err) {
          this.claimable = true;
          this.ctx.logger.warn({ err: (err as Error).message }, 'could not claim deliveries');
        }
        if (claimed.length) this.o.metrics.attemptsStarted.inc({ source: 'claimed' }, claimed.length);
        for (const d of claimed) this.launch(d, claimedAt);
        if (claimed.length && claimed.length === free) this.claimable = true;
      }
      if (!this.running) break; // stop() came during the claim: no wait
      if (this.woken) continue;
      const wait = Math.max(1, idle - (performance.now() - lastClaim));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  private launch(d: Delivery, leasedAt: number): void {
    const holding = this.held.get(d.id);
    if (holding && !holding.lost) {
      // Claimed again while its attempt runs here (this process stalled past the lease): the attempt goes on.
      holding.leaseEnd = Math.max(holding.leaseEnd, leasedAt + this.leaseMs);
      return;
    }
    const held = new Held(leasedAt + this.leaseMs);
    this.held.set(d.id, held);
    this.sending++;
    const p = this.send(d, held);
    this.sends.add(p);
    // A bound method, not a closure per attempt (decision 0260).
    p.finally(this.ended.bind(this, d, held, p));
  }

  /** When an attempt launched is recorded or given up. */
  private ended(d: Delivery, held: Held, p: Promise<void>): void {
    if (this.held.get(d.id) === held) this.held.delete(d.id);
    this.sending--;
    this.sends.delete(p);
    this.roomWaiter?.();
    if (this.claimable) {
      this.woken = true;
      this.wakeUp?.();
    }
  }

  /** The idle poll would find it later. */
  private scheduleRetries(times: number[]): void {
    if (!this.running) return;
    // Bounded: past this (a receiver that is down) the idle poll finds the rest.
    if (this.retries.length < 10_000) this.retries.push(...times);
    const next = Math.min(...this.retries);
    if (next >= this.retryAt) return;
    clearTimeout(this.retryTimer);
    this.retryAt = next;
    // A few ms late, so Postgres's now() has passed next_attempt_at too.
    this.retryTimer = setTimeout(
      () => {
        const now = Date.now();
        this.retries = this.retries.filter((t) => t > now);
        this.retryAt = Number.POSITIVE_INFINITY;
        this.wake();
        if (this.retries.length) this.scheduleRetries([]);
      },
      Math.max(0, next - Date.now() + 5),
    );
  }

  /**
   * No more of one subscription than its free slots over every replica, so a slow receiver cannot take every slot.
   * Claims and issues take turns on an advisory lock, so each counts the leases the previous ones committed.
   */
  private async claim(limit: number): Promise<Delivery[]> {
    const claimed = await claimDeliveries(await this.pool(), this.o.perSubscription, limit, this.leaseMs, this.owner);
    this.o.metrics.statements.inc({ kind: 'claim' });
    this.o.metrics.statementRows.inc({ kind: 'claim' }, claimed.length);
    return claimed;
  }

  /** Those another replica took while this process stalled are cancelled. */
  private async renew(): Promise<void> {
    const entries = [...this.held];
    if (!entries.length) return;
    const sentAt = performance.now();
    try {
      const ids = await renewLeases(
        await this.pool(),
        entries.map(([id]) => id),
        this.owner,
        this.leaseMs,
      );
      this.o.metrics.statements.inc({ kind: 'renew' });
      this.o.metrics.statementRows.inc({ kind: 'renew' }, entries.length);
      const kept = new Set(ids);
      for (const [id, held] of entries) {
        if (kept.has(id)) held.leaseEnd = Math.max(held.leaseEnd, sentAt + this.leaseMs);
        // Gone from the map: recorded meanwhile, nothing to stop.
        else if (this.held.get(id) === held) {
          held.lost = true;
          held.cancel.abort();
        }
      }
    } catch (err) {
      // The leases run out unless the next renewal succeeds.
      this.ctx.logger.warn({ err: (err as Error).message }, 'could not renew delivery leases');
    }
  }

  /** Not sent, or not recorded, once its lease is known to be lost: another replica may be sending it. */
  private async send(delivery: Delivery, held: Held): Promise<void> {
    if (performance.now() >= held.leaseEnd) return void this.o.metrics.leasesLost.inc();
    const result = await this.sender.attempt(delivery, held);
    if (held.lost || result.error === LEASE_LOST) return void this.o.metrics.leasesLost.inc();
    const recorded = withResolvers<void>();
    this.finished.push({ delivery, result, at: new Date(), done: recorded.resolve });
    this.recording ??= this.recordAll();
    await recorded.promise;
  }

  private async recordAll(): Promise<void> {
    for (;;) {
      // Few waiting: let the attempts finishing meanwhile share the statement and its commit.
      if (this.finished.length < RECORD_WITHOUT_LINGER && this.running)
        await new Promise((resolve) => setTimeout(resolve, this.o.recordLingerMs ?? 2));
      // Checked and cleared in the same tick as send() pushes, so no finished attempt is left waiting.
      if (!this.finished.length) {
        this.recording = undefined;
        return;
      }
      const batch = this.finished.splice(0, RECORD_BATCH);
      try {
        await this.record(batch);
      } catch (err) {
        // The leases run out and the deliveries are sent again: at least once, never lost.
        this.ctx.logger.error({ err: (err as Error).message, deliveries: batch.map((f) => f.delivery.id) }, 'could not record attempts');
      }
      for (const f of batch) f.done();
    }
  }

  private async record(batch: Finished[]): Promise<void> {
    const attempts: AttemptRecord[] = [];
    const ended = new Map<string, Ended[]>();
    const retries: number[] = [];
    /** Counted once the statement has committed. */
    const results: Delivery['status'][] = [];
    for (const f of batch) {
      const { delivery, result, at } = f;
      const attemptCount = delivery.attemptCount + 1;
      let status: Delivery['status'] = 'pending';
      let nextAttemptAt: Date | null = null;
      if (result.outcome === 'succeeded') status = 'succeeded';
      else if (result.outcome === 'failed' || attemptCount > delivery.maxRetries) status = 'failed';
      else {
        nextAttemptAt = new Date(
          at.getTime() +
            nextWaitMs(
              attemptCount,
              result.retryAfterSeconds,
              Math.random,
              this.o.retryBaseMs ?? RETRY_BASE_MS,
              this.o.retryMaxWaitMs ?? RETRY_MAX_WAIT_MS,
            ),
        );
        retries.push(nextAttemptAt.getTime());
      }
      results.push(status);
      attempts.push({
        id: deliveryId(),
        companyId: delivery.companyId,
        deliveryId: delivery.id,
        at,
        statusCode: result.statusCode,
        error: result.error,
        durationMs: result.durationMs,
        responseBody: result.responseBody ?? null,
        status,
        attemptCount,
        nextAttemptAt,
        completedAt: status === 'pending' ? null : at,
      });
      if (status !== 'pending') {
        const list = ended.get(delivery.subscriptionId) ?? [];
        list.push({ ...f, succeeded: status === 'succeeded' });
        ended.set(delivery.subscriptionId, list);
      }
    }
    const onlySucceeded = [...ended].filter(([, list]) => list.every((e) => e.succeeded));
    const withFailures = [...ended].filter(([, list]) => !list.every((e) => e.succeeded));
    // Without failures, no WAL flush wait: a lost record only means a resend once the lease runs out (at least once).
    // With failures, the health counters that may disable the subscription are flushed.
    const reset = onlySucceeded.map(([id]) => id);
    const pool = await this.pool();
    let recorded: Set<string>;
    // One statement is one transaction: attempts, results and health counters commit together.
    if (!withFailures.length) recorded = await recordAttempts(pool, attempts, reset, false, this.owner);
    else
      recorded = await inTransaction(pool, async (client) => {
        const ids = await recordAttempts(client, attempts, reset, true, this.owner);
        for (const [subscriptionId, list] of withFailures) {
          const own = list.filter((e) => ids.has(e.delivery.id));
          if (own.length) await recordHealth(client, subscriptionId, own, this.o.health, this.ctx.logger, this.ctx.outbox);
        }
        return ids;
      });
    this.o.metrics.statements.inc({ kind: 'record' });
    this.o.metrics.statementRows.inc({ kind: 'record' }, batch.length);
    this.countOutcomes(batch, results);
    if (recorded.size < batch.length) this.o.metrics.leasesLost.inc(batch.length - recorded.size);
    if (retries.length) this.scheduleRetries(retries);
  }

  private countOutcomes(batch: Finished[], results: Delivery['status'][]): void {
    for (const [i, f] of batch.entries()) {
      const status = results[i];
      const result = status === 'pending' ? 'retrying' : status;
      this.o.metrics.outcomes.inc({ result, status_class: statusClass(f.result.statusCode) });
      if (status !== 'succeeded') continue;
      const committed = eventIdTime(f.delivery.eventId);
      if (committed !== undefined) this.o.metrics.latency.observe(Math.max(0, f.at.getTime() - committed) / 1000);
    }
  }
}
