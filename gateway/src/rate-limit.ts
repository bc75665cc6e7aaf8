import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

/**
 * Per-key limit over a fixed one-minute window kept in Redis, so every gateway process shares one count.
 * If Redis fails, each process falls back to an in-memory limiter rather than refusing all traffic.
 */
export class KeyRateLimiter {
  private readonly limiters = new Map<number, RateLimiterRedis>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly defaultPerMinute: number,
  ) {}

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

  async consume(keyId: string, perMinute: number | undefined): Promise<RateDecision> {
    const limit = perMinute ?? this.defaultPerMinute;
    try {
      const res = await this.limiter(limit).consume(keyId, 1);
      return { allowed: true, limit, remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
    }
  }
}
