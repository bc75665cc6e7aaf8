/** `npm run bench:leads`: the rich lead bench (bench/leads/bench.ts), with the settings of its knobs. */
import { num } from '../lib/harness.js';
import { runBench } from '../lib/infra.js';
import { benchLeads } from './bench.js';

/**
 * Knobs: BENCH_CONNECTIONS (32), BENCH_DURATION (10 s), BENCH_WARMUP (2 s), BENCH_ONE_DURATION (5 s),
 * BENCH_ONE_WARMUP (1 s), BENCH_PGBENCH_THREADS (1), BENCH_LEADS_PARTS (`a,b`: run only some).
 */
await runBench(() =>
  benchLeads({
    connections: num('BENCH_CONNECTIONS', 32),
    durationS: num('BENCH_DURATION', 10),
    warmupS: num('BENCH_WARMUP', 2),
    oneDurationS: num('BENCH_ONE_DURATION', 5),
    oneWarmupS: num('BENCH_ONE_WARMUP', 1),
    pgbenchThreads: num('BENCH_PGBENCH_THREADS', 1),
    parts: new Set((process.env.BENCH_LEADS_PARTS ?? 'a,b').split(',').map((p) => p.trim())),
  }),
);
