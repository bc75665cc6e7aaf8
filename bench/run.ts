/** `npm run bench`: the gateway and the lead path (bench/gateway.ts), with the settings of its knobs. */
import { benchGateway, type GatewaySettings } from './gateway.js';
import { num } from './lib/harness.js';
import { runBench } from './lib/infra.js';

/**
 * Knobs: BENCH_CONNECTIONS (32), BENCH_DURATION (10 s), BENCH_WARMUP (2 s), BENCH_ONE_DURATION (5 s),
 * BENCH_ONE_WARMUP (1 s), BENCH_ONE_ROUNDS (8), BENCH_ONE_WINDOW (1 s), BENCH_STAGE_DURATION (4 s), BENCH_STAGES=0
 * (skip 1c), BENCH_PROFILE=1, BENCH_PGBENCH_THREADS (1).
 */
const settings = (): GatewaySettings => ({
  connections: num('BENCH_CONNECTIONS', 32),
  durationS: num('BENCH_DURATION', 10),
  warmupS: num('BENCH_WARMUP', 2),
  oneDurationS: num('BENCH_ONE_DURATION', 5),
  oneWarmupS: num('BENCH_ONE_WARMUP', 1),
  oneRounds: num('BENCH_ONE_ROUNDS', 8),
  oneWindowS: num('BENCH_ONE_WINDOW', 1),
  stages: process.env.BENCH_STAGES !== '0',
  stageDurationS: num('BENCH_STAGE_DURATION', 4),
  profile: process.env.BENCH_PROFILE === '1',
  pgbenchThreads: num('BENCH_PGBENCH_THREADS', 1),
});

await runBench(() => benchGateway(settings()));
