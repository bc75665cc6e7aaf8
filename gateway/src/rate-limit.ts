import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** Redis's last answer on a key's window, minus what this process let through since. */
interface Estimate {
  remaining: number;
  resetAt: number;
  syncedAt: number;
  /** Sent without waiting for the answer, not answered yet. */
  inflight: number;
}

const FRESH_MS = 1000;
/**
 * Fast-path consumptions of a key are sent to Redis together, at most this long after the first (decisions 0016,
 * 0266), or at once when a key's unsent points reach a quarter of its margin.
 */
const SEND_EVERY_MS = 20;

interface Unsent {
  keyId: string;
  limit: number;
  est: Estimate;
  points: number;
}

/**
 * A fixed one-minute window in Redis shared by every process; if Redis fails, each process falls back to memory
 * rather than refusing all traffic. Far from the limit a request does not wait for Redis (decision 0013); within
 * `margin` of it, or on a stale estimate, every request waits, which is exact across processes. At most `margin / 2`
 * unanswered consumptions per key bound how far a burst can overshoot.
 */
export class KeyRateLimiter {
  private readonly limiters = new Map<number, RateLimiterRedis>();
  private readonly estimates = new Map<string, Estimate>();
  private readonly unsent = new Map<string, Unsent>();
  private sendTimer: NodeJS.Timeout | undefined;
  /** The timer is the immediate one a key's unsent quarter-margin set. */
  private sendingSoon = false;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly defaultPerMinute: number,
    private readonly sendEveryMs = SEND_EVERY_MS,
  ) {}

  static margin(limit: number): number {
    return Math.max(20, Math.ceil(limit * 0.02));
  }

  private limiter(points: number): RateLimiterRedis {
    let l = this.limiters.get(points);
    if (!l) {
      l = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${this.prefix}rl:${points}`,
        points,
        duration: 60,
        insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
      });
      this.limiters.set(points, l);
    }
    return l;
  }

  /** Points above 1 (a batch's items, decision 0181) always wait for Redis. */
  consume(keyId: string, perMinute: number | undefined, points = 1): RateDecision | Promise<RateDecision> {
    const limit = perMinute ?? this.defaultPerMinute;
    const id = `${limit}:${keyId}`;
    const est = this.estimates.get(id);
    const now = Date.now();
    const margin = KeyRateLimiter.margin(limit);
    if (
      points === 1 &&
      est &&
      est.resetAt > now &&
      now - est.syncedAt < FRESH_MS &&
      est.remaining - 1 > margin &&
      est.inflight < margin / 2
    ) {
      est.remaining -= 1;
      est.inflight += 1;
      let pending = this.unsent.get(id);
      if (pending) pending.points += 1;
      else {
        pending = { keyId, limit, est, points: 1 };
        this.unsent.set(id, pending);
      }
      // Well before `inflight` reaches margin / 2 and the key's requests would wait for Redis.
      if (pending.points >= margin / 4 && !this.sendingSoon) {
        clearTimeout(this.sendTimer);
        this.sendingSoon = true;
        this.sendTimer = setTimeout(() => this.send(), 0);
      } else this.sendTimer ??= setTimeout(() => this.send(), this.sendEveryMs);
      return { allowed: true, limit, remaining: est.remaining, resetSeconds: Math.max(1, Math.ceil((est.resetAt - now) / 1000)) };
    }
    return this.ask(keyId, limit, points, points > 1).then((answer) => {
      this.learn(id, answer, est);
      return answer.decision;
    });
  }

  /** Sends what is unsent now and waits for Redis's answers: a stopping gateway leaves no request uncounted. */
  async flush(): Promise<void> {
    clearTimeout(this.sendTimer);
    await this.send();
  }

  private send(): Promise<unknown> {
    this.sendTimer = undefined;
    this.sendingSoon = false;
    const batch = [...this.unsent.entries()];
    this.unsent.clear();
    const answers: Promise<void>[] = [];
    for (const [id, { keyId, limit, est, points }] of batch) {
      const answered = this.ask(keyId, limit, points).then(
        (answer) => {
          est.inflight -= points;
          this.learn(id, answer, est);
        },
        () => {
          est.inflight -= points;
          est.syncedAt = 0; // ask again before trusting the estimate
        },
      );
      answers.push(answered);
    }
    return Promise.all(answers);
  }

  private learn(id: string, answer: { decision: RateDecision; resetAt: number }, est: Estimate | undefined): void {
    const current = this.estimates.get(id) ?? est;
    const inflight = current?.inflight ?? 0;
    const next: Estimate = {
      // Redis answers in order: later consumptions are still in flight.
      remaining: answer.decision.allowed ? answer.decision.remaining - inflight : 0,
      resetAt: answer.resetAt,
      syncedAt: Date.now(),
      inflight,
    };
    if (current) Object.assign(current, next);
    else {
      if (this.estimates.size > 50_000) this.estimates.clear();
      this.estimates.set(id, next);
    }
  }

  private async ask(keyId: string, limit: number, points = 1, batch = false): Promise<{ decision: RateDecision; resetAt: number }> {
    try {
      const res = await this.limiter(limit).consume(keyId, points);
      return {
        decision: { allowed: true, limit, remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) },
        resetAt: Date.now() + res.msBeforeNext,
      };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      let remaining = 0;
      if (batch) {
        // A refused batch costs one point, as any refused request (decision 0183): the others are given back.
        await this.limiter(limit)
          .reward(keyId, points - 1)
          .catch(() => undefined);
        remaining = Math.max(0, limit - (rejection.consumedPoints - (points - 1)));
      }
      return {
        decision: { allowed: false, limit, remaining, resetSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) },
        resetAt: Date.now() + rejection.msBeforeNext,
      };
    }
  }
}
