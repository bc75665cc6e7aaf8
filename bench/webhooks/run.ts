/** `npm run bench:webhooks`: the webhook pipeline bench (bench/webhooks/bench.ts), with the settings of its knobs. */
import { num } from '../lib/harness.js';
import { runBench } from '../lib/infra.js';
import { benchWebhooks } from './bench.js';

/**
 * Knobs: BENCH_WH_DURATION (10 s measured), BENCH_WH_WARMUP (3 s), BENCH_WH_LATENCY_DURATION (10 s), BENCH_WH_RATE
 * (the rate of (b); default half of (a)), BENCH_WH_LATENCY_ONLY=1 (only (b), at BENCH_WH_RATE), BENCH_WH_CURVE (e.g.
 * 300,600,900: (b) again at each of these rates, one line each), BENCH_WH_BACKLOG (4000), BENCH_WH_PROFILE=1,
 * BENCH_WH_DEBUG_SLOW=1 (when and in which stage the events of (b) slower than 25 ms were late), BENCH_WH_CONCURRENCY
 * (WEBHOOK_CONCURRENCY, 128), BENCH_WH_PER_SUBSCRIPTION (WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY, 256),
 * BENCH_WH_KEEP_DIRTY=1 ((b) without writing back the page cache (a) left dirty first, decision 0269).
 */
const rate = num('BENCH_WH_RATE', 0);
await runBench(() =>
  benchWebhooks({
    durationS: num('BENCH_WH_DURATION', 10),
    warmupS: num('BENCH_WH_WARMUP', 3),
    latencyDurationS: num('BENCH_WH_LATENCY_DURATION', 10),
    rate,
    backlog: num('BENCH_WH_BACKLOG', 4000),
    latencyOnly: process.env.BENCH_WH_LATENCY_ONLY === '1' && rate > 0,
    curve: (process.env.BENCH_WH_CURVE ?? '')
      .split(',')
      .map(Number)
      .filter((n) => n > 0),
    profile: process.env.BENCH_WH_PROFILE === '1',
    writeBackBeforeLatency: process.env.BENCH_WH_KEEP_DIRTY !== '1',
    concurrency: num('BENCH_WH_CONCURRENCY', 128),
    perSubscription: num('BENCH_WH_PER_SUBSCRIPTION', 256),
  }),
);
