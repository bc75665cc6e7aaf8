import type http from 'node:http';
import { AppError } from '@svc/platform/errors';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** Public paths the gateway serves without a key, and the service that answers them. */
export const PUBLIC_PREFIX = '/public/satisfaction';

/**
 * The limits of the public satisfaction route (decision 0082), shared by every gateway process through Redis: per
 * client address (what one visitor may try, across tokens: guessing tokens is bounded here) and per token (what one
 * link may take, whoever asks). Over either, 429 with Retry-After.
 */
export class PublicRateLimiter {
  private readonly byAddress: RateLimiterRedis;
  private readonly byToken: RateLimiterRedis;

  constructor(redis: Redis, prefix: string, perAddress: number, perToken: number) {
    const limiter = (name: string, points: number) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${prefix}public:${name}`,
        points,
        duration: 60,
        insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
      });
    this.byAddress = limiter('addr', perAddress);
    this.byToken = limiter('token', perToken);
  }

  /** Counts the request against both limits; throws rate_limited (after setting Retry-After) when one is spent. */
  async consume(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const address = req.socket.remoteAddress ?? 'unknown';
    const token = (req.url ?? '').split('?')[0]?.slice(PUBLIC_PREFIX.length + 1) ?? '';
    try {
      await this.byAddress.consume(address);
      // An empty or odd token still counts for its address; only plausible tokens get a counter of their own.
      if (/^[A-Za-z0-9_-]{1,64}$/.test(token)) await this.byToken.consume(token);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
      throw new AppError('rate_limited', 'Too many requests to the satisfaction form; try again later');
    }
  }
}
