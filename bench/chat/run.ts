/** `npm run bench:chat`: the chat bench (bench/chat/bench.ts), with the settings of its knobs. */
import { num } from '../lib/harness.js';
import { runBench } from '../lib/infra.js';
import { benchChat } from './bench.js';

/** Knobs: BENCH_CONNECTIONS (8), BENCH_DURATION (8 s), BENCH_WARMUP (2 s), BENCH_ONE_DURATION (5 s), BENCH_CHATS (10000), BENCH_DEEP_PAGE (150),
 * BENCH_PROFILE (1: a CPU profile of chat per phase). */
await runBench(() =>
  benchChat({
    connections: num('BENCH_CONNECTIONS', 8),
    durationS: num('BENCH_DURATION', 8),
    warmupS: num('BENCH_WARMUP', 2),
    oneDurationS: num('BENCH_ONE_DURATION', 5),
    chats: num('BENCH_CHATS', 10_000),
    deepPage: num('BENCH_DEEP_PAGE', 150),
    profile: process.env.BENCH_PROFILE === '1',
  }),
);
