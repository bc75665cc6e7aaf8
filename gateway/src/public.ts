import type http from 'node:http';
import { AppError } from '@svc/platform/errors';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { AddressOf } from './client-address.js';

export const PUBLIC_PREFIX = '/public/satisfaction';

/** Shared through Redis; while Redis is unreachable each process counts alone rather than letting everything through. */
function perMinute(redis: Redis, keyPrefix: string, points: number): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration: 60,
    insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
  });
}

/** Over a limit, sets Retry-After (whole seconds, at least 1) and throws rate_limited. */
async function within(res: http.ServerResponse, message: string, consume: () => Promise<unknown>): Promise<void> {
  try {
    await consume();
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
    throw new AppError('rate_limited', message);
  }
}

/**
 * Per client address (bounds token guessing) and per token (decision 0082).
 */
export class PublicRateLimiter {
  private readonly byAddress: RateLimiterRedis;
  private readonly byToken: RateLimiterRedis;

  constructor(
    redis: Redis,
    prefix: string,
    perAddress: number,
    perToken: number,
    private readonly addressOf: AddressOf,
  ) {
    this.byAddress = perMinute(redis, `${prefix}public:addr`, perAddress);
    this.byToken = perMinute(redis, `${prefix}public:token`, perToken);
  }

  consume(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const token = (req.url ?? '').split('?')[0]?.slice(PUBLIC_PREFIX.length + 1) ?? '';
    return within(res, 'Too many requests to the satisfaction form; try again later', async () => {
      await this.byAddress.consume(this.addressOf(req));
      // An empty or odd token still counts for its address; only plausible tokens get a counter of their own.
      if (/^[A-Za-z0-9_-]{1,64}$/.test(token)) await this.byToken.consume(token);
    });
  }
}

/** Signed downloads, counted apart from the satisfaction form's (decision 0137). */
export class DownloadRateLimiter {
  private readonly byAddress: RateLimiterRedis;

  constructor(
    redis: Redis,
    prefix: string,
    perAddress: number,
    private readonly addressOf: AddressOf,
  ) {
    this.byAddress = perMinute(redis, `${prefix}public:files:addr`, perAddress);
  }

  consume(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    return within(res, 'Too many file downloads; try again later', () => this.byAddress.consume(this.addressOf(req)));
  }
}
