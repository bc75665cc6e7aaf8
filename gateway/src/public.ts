import type http from 'node:http';
import { AppError } from '@svc/platform/errors';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { AddressOf } from './client-address.js';

/** Public paths the gateway serves without a key, and the service that answers them. */
export const PUBLIC_PREFIX = '/public/satisfaction';

/**
 * Requests per minute under a key, shared by every gateway process through Redis; while Redis is unreachable each
 * process counts alone in memory (the insurance limiter) rather than letting everything through.
 */
function perMinute(redis: Redis, keyPrefix: string, points: number): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration: 60,
    insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
  });
}

/** Runs the consumptions; over a limit, sets Retry-After (whole seconds, at least 1) and throws rate_limited (429). */
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
 * The limits of the public satisfaction route (decision 0082), shared by every gateway process through Redis: per
 * client address (what one visitor may try, across tokens: guessing tokens is bounded here) and per token (what one
 * link may take, whoever asks). Over either, 429 with Retry-After.
 */
export class PublicRateLimiter {
  private readonly byAddress: RateLimiterRedis;
  private readonly byToken: RateLimiterRedis;

  /** `addressOf`: the client's address, through the trusted proxies (decision 0152). */
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

  /** Counts the request against both limits; throws rate_limited (after setting Retry-After) when one is spent. */
  consume(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const token = (req.url ?? '').split('?')[0]?.slice(PUBLIC_PREFIX.length + 1) ?? '';
    return within(res, 'Too many requests to the satisfaction form; try again later', async () => {
      await this.byAddress.consume(this.addressOf(req));
      // An empty or odd token still counts for its address; only plausible tokens get a counter of their own.
      if (/^[A-Za-z0-9_-]{1,64}$/.test(token)) await this.byToken.consume(token);
    });
  }
}

/**
 * The limit of signed file downloads (`GET /public/files/{id}`, decision 0137): requests per minute per client
 * address, shared by every gateway process through Redis, counted apart from the satisfaction form's. Over it, 429
 * with Retry-After, before the request reaches the files service.
 */
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
