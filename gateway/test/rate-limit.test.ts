import { randomBytes } from 'node:crypto';
import { eventually, TEST_REDIS_URL } from '@svc/platform/testing';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { KeyRateLimiter } from '../src/rate-limit.js';

/** The limiter against a real Redis, two "gateway processes" (two limiters, two connections) sharing it. */
describe('KeyRateLimiter (Redis, several processes)', () => {
  let redis: Redis[];
  const prefix = `t${randomBytes(4).toString('hex')}:`;
  const pair = () => redis.map((r) => new KeyRateLimiter(r, prefix, 600));
  const key = () => randomBytes(6).toString('hex');
  /** The points Redis has counted for a key under a limit, read without consuming any. */
  const counted = async (k: string, limit: number) =>
    (await new RateLimiterRedis({ storeClient: redis[1]!, keyPrefix: `${prefix}rl:${limit}`, points: limit, duration: 60 }).get(k))
      ?.consumedPoints ?? 0;

  before(async () => {
    redis = [new Redis(TEST_REDIS_URL), new Redis(TEST_REDIS_URL)];
  });
  after(async () => {
    const keys = await redis[0]!.keys(`${prefix}*`);
    if (keys.length) await redis[0]!.del(...keys);
    for (const r of redis) r.disconnect();
  });

  it('is exact across two processes for a small limit (every request waits for Redis)', async () => {
    const [a, b] = pair();
    const k = key();
    const decisions = [];
    for (let i = 0; i < 16; i++) decisions.push(await (i % 2 ? a! : b!).consume(k, 10));
    expect(decisions.filter((d) => d.allowed)).to.have.length(10);
    expect(decisions.slice(0, 10).map((d) => d.remaining)).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(decisions.slice(10).every((d) => !d.allowed && d.remaining === 0 && d.resetSeconds >= 1)).to.equal(true);
  });

  it('a consumption of several points (a batch) waits for Redis and counts them all; refused, it costs one', async () => {
    const [a, b] = pair();
    const k = key();
    expect((await a!.consume(k, 1000)).remaining).to.equal(999);
    expect(a!.consume(k, 1000)).not.to.be.instanceOf(Promise);
    const batch = a!.consume(k, 1000, 40);
    expect(batch).to.be.instanceOf(Promise);
    const decision = await batch;
    expect(decision.allowed).to.equal(true);
    // Redis's answer; the fast-path point before it may still be on its way there.
    expect(decision.remaining).to.be.within(958, 959);
    await eventually(async () => (await counted(k, 1000)) === 42, 5000, 5);
    const small = key();
    expect(await b!.consume(small, 10, 4)).to.include({ allowed: true, remaining: 6 });
    // Refused, it costs one point like any refused request: the rest of the window stays usable.
    expect(await b!.consume(small, 10, 7)).to.include({ allowed: false, remaining: 5 });
    expect(await b!.consume(small, 10)).to.include({ allowed: true, remaining: 4 });
  });

  it('far from the limit answers without waiting for Redis, and Redis still counts every request', async () => {
    const [a] = pair();
    const k = key();
    const first = a!.consume(k, 1000);
    expect(first).to.be.instanceOf(Promise); // nothing known yet: wait for Redis
    expect((await first).remaining).to.equal(999);
    const second = a!.consume(k, 1000);
    expect(second).not.to.be.instanceOf(Promise);
    expect(second).to.include({ allowed: true, remaining: 998 });
    await eventually(async () => (await counted(k, 1000)) === 2, 5000, 5); // the second consumption reached Redis
    const third = await new KeyRateLimiter(redis[1]!, prefix, 600).consume(k, 1000);
    expect(third.remaining).to.equal(997);
  });

  it('sends the fast-path consumptions of a key together: one Redis command for a burst, every request counted', async () => {
    const own = new Redis(TEST_REDIS_URL);
    try {
      let commands = 0;
      const send = own.sendCommand.bind(own);
      own.sendCommand = ((...args: Parameters<typeof send>) => {
        commands += 1;
        return send(...args);
      }) as typeof own.sendCommand;
      const limiter = new KeyRateLimiter(own, prefix, 600);
      const k = key();
      await limiter.consume(k, 10_000); // learns the window
      commands = 0;
      const burst = Array.from({ length: 100 }, () => limiter.consume(k, 10_000));
      expect(burst.every((d) => !(d instanceof Promise) && d.allowed)).to.equal(true);
      expect((burst.at(-1) as { remaining: number }).remaining).to.equal(9_899);
      expect(commands).to.equal(0); // nothing sent while the burst is served
      await eventually(async () => (await counted(k, 10_000)) === 101, 5000, 5); // Redis counted all 101
      expect(commands).to.be.within(1, 2); // the burst's 100 points in one command (a script load at most)
      const next = await new KeyRateLimiter(redis[1]!, prefix, 600).consume(k, 10_000);
      expect(next.remaining).to.equal(9_898);
    } finally {
      own.disconnect();
    }
  });

  /** A limiter whose Redis connection counts the commands it sends. */
  const counting = (sendEveryMs?: number) => {
    const own = new Redis(TEST_REDIS_URL);
    const sent = { commands: 0 };
    const send = own.sendCommand.bind(own);
    own.sendCommand = ((...args: Parameters<typeof send>) => {
      sent.commands += 1;
      return send(...args);
    }) as typeof own.sendCommand;
    return { own, sent, limiter: new KeyRateLimiter(own, prefix, 600, sendEveryMs) };
  };

  it('paced requests of a key share one Redis command per interval (decision 0266), and Redis counts each', async () => {
    const { own, sent, limiter } = counting(50);
    try {
      const k = key();
      await limiter.consume(k, 100_000); // learns the window
      sent.commands = 0;
      // One request a millisecond or so, as one connection sends them: far fewer commands than requests (one each
      // with decision 0016's 2 ms).
      for (let i = 0; i < 20; i++) {
        expect(limiter.consume(k, 100_000)).not.to.be.instanceOf(Promise);
        await new Promise((r) => setTimeout(r, 1));
      }
      await eventually(async () => (await counted(k, 100_000)) === 21, 5000, 5);
      expect(sent.commands).to.be.within(1, 6);
    } finally {
      own.disconnect();
    }
  });

  it("sends a key's consumptions at once when they reach a quarter of its margin, without waiting for the interval", async () => {
    // An interval no test waits for: only the quarter-margin send can bring the points to Redis.
    const { own, sent, limiter } = counting(600_000);
    try {
      const k = key();
      const limit = 400; // margin 20: sent at 5 unsent points
      await limiter.consume(k, limit);
      sent.commands = 0;
      for (let i = 0; i < 5; i++) expect(limiter.consume(k, limit)).not.to.be.instanceOf(Promise);
      await eventually(async () => (await counted(k, limit)) === 6, 5000, 5);
      expect(sent.commands).to.be.within(1, 2);
    } finally {
      own.disconnect();
    }
  });

  it('flush() sends the unsent consumptions at once and resolves once Redis counted them (a stopping gateway)', async () => {
    const { own, limiter } = counting(600_000);
    try {
      const k = key();
      await limiter.consume(k, 100_000);
      for (let i = 0; i < 3; i++) limiter.consume(k, 100_000);
      expect(await counted(k, 100_000)).to.equal(1);
      await limiter.flush();
      expect(await counted(k, 100_000)).to.equal(4);
    } finally {
      own.disconnect();
    }
  });

  it('bounds the overshoot of concurrent bursts from two processes: at most margin/2 per process', async () => {
    const [a, b] = pair();
    const k = key();
    const limit = 1000;
    let allowed = 0;
    for (let round = 0; round < 30; round++) {
      const burst = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a! : b!).consume(k, limit)));
      allowed += burst.filter((d) => d.allowed).length;
    }
    const bound = 2 * (KeyRateLimiter.margin(limit) / 2);
    expect(allowed).to.be.within(limit, limit + bound);
    await eventually(async () => (await counted(k, limit)) === 30 * 50, 5000, 5); // every consumption reached Redis
    const after = await (a!.consume(k, limit) as Promise<unknown>);
    expect(after).to.include({ allowed: false, remaining: 0 });
  });

  it('the fast path stops within the margin: the last requests of a window wait for Redis', async () => {
    const [a] = pair();
    const k = key();
    const limit = 100; // margin 20
    let fast = 0;
    for (let i = 0; i < 100; i++) {
      const d = a!.consume(k, limit);
      if (!(d instanceof Promise)) fast++;
      await d;
      await new Promise((r) => setTimeout(r, 3)); // paced: the last consumptions sent and answered meanwhile
    }
    expect(fast).to.be.greaterThan(50);
    const tail = a!.consume(k, limit);
    expect(tail).to.be.instanceOf(Promise);
    expect(await tail).to.include({ allowed: false });
  });
});
