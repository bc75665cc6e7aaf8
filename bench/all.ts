/**
 * `npm run bench:all`: every bench of the hot paths in turn, each on its own stack and database, with settings that
 * fit 15 minutes on 2 cores; then one table of issue 20's figures against their targets and, as the last line, the
 * same figures as JSON. A bench that fails leaves its figures unmeasured (and the run's exit code 1); the others still
 * run. See bench/README.md and decision 0220.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../scripts/stack.js';
import { type BenchOutcome, disturbedPhases, json, rows, table } from './all/summary.js';
import { benchChat } from './chat/bench.js';
import { benchGateway } from './gateway.js';
import { benchLeads } from './leads/bench.js';
import { f1, say } from './lib/harness.js';
import { runBench } from './lib/infra.js';
import type { SomeFigures } from './lib/targets.js';
import { benchWebhooks } from './webhooks/bench.js';

// Shorter than each bench's own defaults so the whole run fits its budget; every phase keeps a warm-up of its own.
const benches: [string, () => Promise<SomeFigures>][] = [
  [
    'gateway',
    () =>
      benchGateway({
        connections: 32,
        durationS: 8,
        warmupS: 2,
        oneDurationS: 5,
        oneWarmupS: 1,
        // Requests taking turns one by one, 20 rounds of 3 s (decision 0242).
        oneRounds: 20,
        oneWindowS: 3,
        stages: true,
        stageDurationS: 3,
        profile: false,
        pgbenchThreads: 1,
      }),
  ],
  [
    'webhooks',
    () =>
      benchWebhooks({
        durationS: 10,
        warmupS: 3,
        latencyDurationS: 10,
        // The latency target is set at 1,000 events/s.
        rate: 1000,
        backlog: 4000,
        latencyOnly: false,
        curve: [],
        profile: false,
        writeBackBeforeLatency: true,
        concurrency: 128,
        perSubscription: 256,
      }),
  ],
  ['chat', () => benchChat({ connections: 8, durationS: 8, warmupS: 2, oneDurationS: 5, chats: 10_000, deepPage: 150 })],
  [
    'leads',
    () =>
      benchLeads({
        connections: 32,
        durationS: 6,
        warmupS: 1,
        oneDurationS: 4,
        oneWarmupS: 1,
        pgbenchThreads: 1,
        parts: new Set(['a', 'b']),
      }),
  ],
];

async function main(): Promise<void> {
  const only = process.env.BENCH_ALL_ONLY?.split(',');
  const started = performance.now();
  const outcomes: BenchOutcome[] = [];
  for (const [bench, run] of benches) {
    if (only && !only.includes(bench)) continue;
    const t0 = performance.now();
    say(`\n======== bench:all: ${bench} ========\n`);
    try {
      outcomes.push({ bench, result: await run() });
    } catch (err) {
      const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      process.stderr.write(`bench:all: ${bench} failed: ${error}\n`);
      outcomes.push({ bench, error: error.split('\n')[0] });
    }
    say(`\nbench:all: ${bench} took ${f1((performance.now() - t0) / 1000)} s`);
  }
  const all = rows(outcomes);
  const disturbed = disturbedPhases(outcomes);
  const failed = outcomes.filter((o) => o.error);
  const outDir = path.join(REPO_ROOT, '.data', 'bench-all', `${Date.now()}`);
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'summary.md'), `${table(all)}\n`);
  writeFileSync(path.join(outDir, 'summary.json'), `${json(all, disturbed)}\n`);
  say(
    `\n======== bench:all: issue 20's figures (${f1((performance.now() - started) / 60_000)} min; also in ${path.relative(REPO_ROOT, outDir)}) ========\n`,
  );
  for (const f of failed) say(`FAILED: ${f.bench}: ${f.error} (its figures are not measured)`);
  say(
    disturbed.length
      ? `DISTURBED: other processes were busy during ${disturbed.length} phase(s) (listed in the JSON); those figures are not representative.`
      : 'no phase was disturbed by processes outside the benches',
  );
  say();
  say(table(all));
  say();
  say(json(all, disturbed));
  if (failed.length) process.exitCode = 1;
}

await runBench(main);
