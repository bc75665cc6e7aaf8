import { randomUUID } from 'node:crypto';
import { inTransaction } from '@svc/platform/db/native';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool } from 'pg';
import type { Delivery } from './delivery.entity.js';
import { type DeliveryMetrics, eventIdTime, statusClass } from './delivery.metrics.js';
import { type AttemptRecord, claimDeliveries, recordAttempts, renewLeases } from './delivery.store.js';
import { deliveryId } from './delivery-ids.js';
import { type AttemptResult, LEASE_LOST, nextWaitMs, RETRY_BASE_MS, RETRY_MAX_WAIT_MS, type WebhookSender } from './sender.js';
import { type HealthPolicy, recordHealth } from './subscription-health.js';

// Short, and renewed by its holder every RENEW_EVERY of it while the attempt runs (one may take 30 s): a replica that
// stops making progress, paused or dead, holds its deliveries this long at most (decision 0156).
export const LEASE_MS = 6_000;
const RENEW_EVERY = 1 / 4;

interface DispatcherOptions {
  /** Deliveries in flight in this process. */
  concurrency: number;
  /** Deliveries of one subscription in flight at once, over every replica (counted from the leases). */
  perSubscription: number;
  /** The first retry wait; later ones double. */
  retryBaseMs?: number;
  /** The longest single wait. */
  retryMaxWaitMs?: number;
  health?: HealthPolicy;
  /** How often Postgres is asked for deliveries nobody told this process about (other replicas' retries, expired leases). */
  idlePollMs?: number;
  /** How long a finished attempt waits for others to be recorded with it, when few are waiting (default 2 ms). */
  recordLingerMs?: number;
  /** How long a lease lasts unless its holder renews it (LEASE_MS). */
  leaseMs?: number;
  metrics: DeliveryMetrics;
}

/** A delivery this process holds the lease of, from its launch until its attempt is recorded (or given up). */
interface Held {
  /** When the lease runs out unless renewed (performance.now() time, never later than Postgres's lease_until). */
  leaseEnd: number;
  /** Renewing found the lease with another process, or the delivery no longer pending: nothing is recorded here. */
  lost: boolean;
  cancel: AbortController;
}

/** A finished attempt waiting to be recorded (with the others that finished meanwhile). */
interface Finished {
  delivery: Delivery;
  result: AttemptResult;
  at: Date;
  done: () => void;
}

/** A finished attempt that ended its delivery (succeeded or failed for good). */
type Ended = Finished & { succeeded: boolean };

/** Rows per statement when recording, so no statement grows without bound. */
const RECORD_BATCH = 500;
/** Finished attempts that are recorded at once, without lingering for more. */
const RECORD_WITHOUT_LINGER = 64;

/**
 * Sends deliveries. Most come from this process's consumer, leased to it as they were inserted (`reserve` and
 * `deliver`); the others (retries, redeliveries, those issued while this process had no room, and those whose
 * process died holding their lease) are claimed from Postgres: when one is known to be waiting, when a retry
 * falls due here, and every `idlePollMs` for what other replicas left. A delivery is leased to this process (by its
 * `owner` id) while it is in flight, the lease short and renewed while the attempt runs, so a crashed or stalled
 * process only delays it until the lease runs out, and only the lease's holder records its attempt (decision 0156).
 * The attempts that finished meanwhile are recorded together: one transaction holds their attempt rows, their results
 * and the subscriptions' health counters, so a delivery's result and attempt are always committed together (and a
 * failed transaction leaves them all leased, to be sent again when the lease runs out: at least once, never lost).
 */
export class Dispatcher {
  private running = false;
  /** Attempts in flight here: started and not yet recorded (each holds a lease). */
  private sending = 0;
  /** Slots promised to the consumer for deliveries it is inserting leased to this process. */
  private reserved = 0;
  /** Deliveries may be waiting in Postgres for a claim (set by wake(); cleared by a claim that got less than it asked). */
  private claimable = true;
  private wakeUp: (() => void) | undefined;
  /** A wake that came while the loop was not waiting (claiming): the next wait returns at once. */
  private woken = false;
  private loop: Promise<void> | undefined;
  private readonly sends = new Set<Promise<void>>();
  private finished: Finished[] = [];
  private recording: Promise<void> | undefined;
  /** The consumer, waiting for room (see room()). */
  private roomWaiter: (() => void) | undefined;
  /** When the retries this process scheduled fall due; the earliest, and its timer (the claim that sends it). */
  private retries: number[] = [];
  private retryAt = Number.POSITIVE_INFINITY;
  private retryTimer: NodeJS.Timeout | undefined;
  /** This process's name on the leases it holds (lease_owner). */
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

  /** Deliveries may be waiting in Postgres (a redelivery, a retry now due): claim them. */
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

  /** Free slots now; when none, resolves once some are (the ones a recorded batch gives back together) or after `maxWaitMs`. */
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

  /**
   * Up to `wanted` slots for deliveries the consumer is about to insert leased to this process; while deliveries may
   * be queued in Postgres, at most half of the free ones, so the claims that send those (oldest first) keep a share.
   */
  reserve(wanted: number): number {
    const free = this.free();
    const granted = Math.max(0, Math.min(wanted, this.claimable ? Math.ceil(free / 2) : free));
    this.reserved += granted;
    return granted;
  }

  /**
   * Sends the deliveries the consumer leased under `reserved` slots (committed: the lease is in Postgres), and
   * gives the rest of the slots back. `queued`: some of its deliveries were inserted without a lease. `leasedAt`:
   * when the statement that leased them was sent (performance.now()).
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
        // A full claim may have left more behind.
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
      // Claimed again while its attempt runs here (this process stalled past the lease and nobody took it): the
      // claim renewed the lease, the running attempt goes on.
      holding.leaseEnd = Math.max(holding.leaseEnd, leasedAt + this.leaseMs);
      return;
    }
    const held: Held = { leaseEnd: leasedAt + this.leaseMs, lost: false, cancel: new AbortController() };
    this.held.set(d.id, held);
    this.sending++;
    const p = this.send(d, held);
    this.sends.add(p);
    p.finally(() => {
      if (this.held.get(d.id) === held) this.held.delete(d.id);
      this.sending--;
      this.sends.delete(p);
      this.roomWaiter?.();
      // A slot is free: it matters only when deliveries wait for a claim.
      if (this.claimable) {
        this.woken = true;
        this.wakeUp?.();
      }
    });
  }

  /** Claims (see wake) when each retry this process scheduled falls due (the idle poll would find it up to idlePollMs later). */
  private scheduleRetries(times: number[]): void {
    if (!this.running) return;
    // Bounded: past this many (a receiver that is down) the idle poll finds the rest.
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
   * Leases up to `limit` due deliveries, oldest first, but no more of one subscription than its free slots:
   * the per-subscription limit minus its deliveries leased now (by any replica), so a slow receiver cannot
   * take every slot. Claims (and issues) of all replicas take turns on an advisory lock, so each counts the leases
   * the previous ones committed.
   */
  private async claim(limit: number): Promise<Delivery[]> {
    const claimed = await claimDeliveries(await this.pool(), this.o.perSubscription, limit, this.leaseMs, this.owner);
    this.o.metrics.statements.inc({ kind: 'claim' });
    this.o.metrics.statementRows.inc({ kind: 'claim' }, claimed.length);
    return claimed;
  }

  /**
   * Extends the leases of the deliveries held here, so a live process keeps them however long their attempts take.
   * Those it no longer holds (another replica took them while this process stalled past their lease) are cancelled.
   */
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
        // Gone from the map: recorded meanwhile (which released the lease), nothing to stop.
        else if (this.held.get(id) === held) {
          held.lost = true;
          held.cancel.abort();
        }
      }
    } catch (err) {
      // The leases run out unless the next renewal succeeds; attempts not yet started past it are not sent.
      this.ctx.logger.warn({ err: (err as Error).message }, 'could not renew delivery leases');
    }
  }

  /**
   * One attempt; resolves once its result is recorded (or could not be: the lease then runs out). Not sent, or not
   * recorded, once its lease is known to be lost: another replica may be sending it.
   */
  private async send(delivery: Delivery, held: Held): Promise<void> {
    // The lease ran out before the attempt could start (this process stalled): another replica may have it.
    if (performance.now() >= held.leaseEnd) return void this.o.metrics.leasesLost.inc();
    const result = await this.sender.attempt(delivery, {
      signal: held.cancel.signal,
      held: () => !held.lost && performance.now() < held.leaseEnd,
    });
    if (held.lost || result.error === LEASE_LOST) return void this.o.metrics.leasesLost.inc();
    await new Promise<void>((done) => {
      this.finished.push({ delivery, result, at: new Date(), done });
      this.recording ??= this.recordAll();
    });
  }

  /** Records the finished attempts, batch after batch, until none is waiting. */
  private async recordAll(): Promise<void> {
    for (;;) {
      // Few waiting: let the attempts finishing meanwhile share the statement (and its commit). They hold their slots
      // and leases this much longer; the receivers already have them.
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

  /** The attempt rows, the deliveries' results and the health of their subscriptions, in one transaction. */
  private async record(batch: Finished[]): Promise<void> {
    const attempts: AttemptRecord[] = [];
    /** Per subscription, its deliveries that ended, in the order they finished. */
    const ended = new Map<string, Ended[]>();
    const retries: number[] = [];
    /** Per attempt, what it did to its delivery: counted once the statement has committed. */
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
    // Subscriptions whose ended deliveries in this batch all succeeded: reset their run, in the same statement.
    const onlySucceeded = [...ended].filter(([, list]) => list.every((e) => e.succeeded));
    const withFailures = [...ended].filter(([, list]) => !list.every((e) => e.succeeded));
    // Without failures, committed without waiting for the WAL flush: lost in a Postgres crash, the deliveries stay
    // leased and are sent again once the lease runs out (same event id; at least once), which is all a lost record
    // can do. With failures, in a transaction with the health counters that may disable the subscription: flushed.
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

  /** Outcomes by result and status class, and commit-to-2xx latency of the deliveries that succeeded. */
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
