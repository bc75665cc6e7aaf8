/**
 * `npm run bench:soak`: the reliability soak's mix at a steady rate through the whole system, with the memory of a
 * process (crm by default) followed: RSS of every process each second, its V8 heap each 5 s, and a heap snapshot
 * after the warm-up and one at the end, compared by constructor. Prints, never asserts. See bench/soak/README.md.
 *
 * Knobs (environment): BENCH_SOAK_RATE (100 req/s), BENCH_SOAK_SECONDS (600, warm-up included), BENCH_SOAK_WARMUP
 * (60 s), BENCH_SOAK_PROCESS (crm), BENCH_SOAK_SNAPSHOTS (1; 0 takes none), BENCH_SOAK_ENV (extra environment of
 * the watched process, `K=V,K=V`: e.g. MALLOC_ARENA_MAX=2).
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { AdminClient } from '../../scripts/demo.js';
import type { ProcessName } from '../../scripts/stack.js';
import { BenchRun, f0, f1, num, say } from '../lib/harness.js';
import { runBench } from '../lib/infra.js';
import { seed } from '../lib/seed.js';
import { growthReport } from './compare.js';
import { readHeap } from './heapsnapshot.js';
import { type HeapFigures, heapOf, rssMb, sendTraffic, type Tenant, type TrafficResult } from './traffic.js';

const RATE = num('BENCH_SOAK_RATE', 100);
const SECONDS = num('BENCH_SOAK_SECONDS', 600);
const WARMUP = num('BENCH_SOAK_WARMUP', 60);
const WATCHED = (process.env.BENCH_SOAK_PROCESS ?? 'crm') as ProcessName;
const SNAPSHOTS = num('BENCH_SOAK_SNAPSHOTS', 1) > 0;
const EXTRA_ENV = Object.fromEntries(
  (process.env.BENCH_SOAK_ENV ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);

const run = new BenchRun('bench-soak');
const heapDir = path.join(run.outDir, 'heap');

interface Sample {
  at: number;
  rss: Record<string, number>;
  heap?: HeapFigures;
}

/** Samples every process's RSS each second and the watched one's heap every fifth, until stopped. */
function sampler(pids: Record<string, number>, metricsUrl: string) {
  const samples: Sample[] = [];
  const t0 = Date.now();
  let n = 0;
  const timer = setInterval(() => {
    const s: Sample = { at: (Date.now() - t0) / 1000, rss: Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, rssMb(pid)])) };
    samples.push(s);
    if (n++ % 5 === 0) void heapOf(metricsUrl).then((h) => (s.heap = h));
  }, 1000);
  return { samples, stop: () => clearInterval(timer) };
}

/** SIGUSR2 makes the process write a snapshot (--heapsnapshot-signal); done when it answers again and the file is still. */
async function heapSnapshot(pid: number, metricsUrl: string): Promise<string> {
  const before = new Set(readdirSync(heapDir));
  const t0 = performance.now();
  process.kill(pid, 'SIGUSR2');
  let file: string | undefined;
  let size = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    file ??= readdirSync(heapDir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const now = statSync(path.join(heapDir, file)).size;
    if (now === size && (await heapOf(metricsUrl))) break;
    size = now;
  }
  say(
    `  heap snapshot ${path.relative(run.outDir, path.join(heapDir, file))}: ${f1(size / 2 ** 20)} MB in ${f1((performance.now() - t0) / 1000)} s`,
  );
  return path.join(heapDir, file);
}

async function tenant(gatewayUrl: string): Promise<Tenant> {
  const s = await seed(gatewayUrl, run.adminToken);
  const admin = new AdminClient(gatewayUrl, run.adminToken);
  const type = await admin.create<{ id: string }>(`/companies/${s.companyId}/task-types`, { name: 'Call', icon: 'phone' });
  // A task is created in the company's first active stage: without one, POST /tasks answers 400.
  await admin.create(`/companies/${s.companyId}/task-stages`, { name: 'To do' });
  const res = await fetch(`${gatewayUrl}/integrations/external/deals`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Soak deal', visibility: 1 }),
  });
  if (res.status !== 201) throw new Error(`POST /deals: ${res.status} ${await res.text()}`);
  const deal = (await res.json()) as { id: string };
  return { key: s.key, leadId: s.leadId, dealId: deal.id, taskTypeId: type.id };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

function memoryLine(label: string, s: Sample | undefined, heap: HeapFigures | undefined): void {
  const rss = s ? Object.entries(s.rss).map(([k, v]) => `${k} ${f0(v)}`) : [];
  say(`  ${label.padEnd(22)} RSS MB: ${rss.join(', ')}`);
  if (heap)
    say(
      `  ${''.padEnd(22)} ${WATCHED} heap MB: used ${f1(heap.usedMb)}, total ${f1(heap.totalMb)}, external ${f1(heap.externalMb)}; ` +
        Object.entries(heap.spacesMb)
          .map(([k, v]) => `${k} ${f1(v)}`)
          .join(', '),
    );
}

function trafficLine(label: string, r: TrafficResult): void {
  const sorted = [...r.latenciesMs].sort((a, b) => a - b);
  const errors = r.errors.size ? JSON.stringify([...r.errors]) : '0';
  say(
    `  ${label}: ${r.sent} requests (skipped ${r.skipped}), errors ${errors}, p50 ${f1(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN)} ms, ` +
      `p99 ${f1(sorted[Math.floor(sorted.length * 0.99)] ?? Number.NaN)} ms`,
  );
}

await runBench(() =>
  run.run(async () => {
    await run.preamble(
      `bench:soak: the reliability soak's mix at ${RATE} req/s for ${SECONDS} s, ${WATCHED}'s memory followed`,
      `warm-up ${WARMUP} s; heap snapshots ${SNAPSHOTS ? 'after the warm-up and at the end' : 'off'}; ${WATCHED} extra env ${JSON.stringify(EXTRA_ENV)}`,
    );
    mkdirSync(heapDir, { recursive: true });
    const nodeOptions = [process.env.NODE_OPTIONS, '--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`]
      .filter(Boolean)
      .join(' ');
    const stack = await run.launch({ [WATCHED]: { NODE_OPTIONS: nodeOptions, ...EXTRA_ENV } });
    const t = await tenant(stack.gatewayUrl);
    const pid = stack.pids[WATCHED];
    const metricsUrl = stack.metricsUrls[WATCHED];
    const s = sampler(stack.pids, metricsUrl);

    say('## Traffic');
    const warm = await sendTraffic(stack.gatewayUrl, t, RATE, WARMUP);
    trafficLine('warm-up', warm);
    const afterWarmUp = { sample: s.samples.at(-1), heap: await heapOf(metricsUrl) };
    const first = SNAPSHOTS ? await heapSnapshot(pid, metricsUrl) : undefined;
    const steadyFrom = s.samples.length;
    const steady = await sendTraffic(stack.gatewayUrl, t, RATE, SECONDS - WARMUP);
    trafficLine('after the warm-up', steady);
    const atEnd = { sample: s.samples.at(-1), heap: await heapOf(metricsUrl) };
    const last = SNAPSHOTS ? await heapSnapshot(pid, metricsUrl) : undefined;
    s.stop();

    say();
    say('## Memory');
    memoryLine('after the warm-up', afterWarmUp.sample, afterWarmUp.heap);
    memoryLine('at the end', atEnd.sample, atEnd.heap);
    // The soak test's measure: the median of the first and of the last third after the warm-up.
    const series = s.samples.slice(steadyFrom);
    const third = Math.max(1, Math.floor(series.length / 3));
    const thirds = Object.keys(stack.pids).map((k) => {
      const a = median(series.slice(0, third).map((x) => x.rss[k]!));
      const b = median(series.slice(-third).map((x) => x.rss[k]!));
      return `${k} ${f0(a)}→${f0(b)} (${b - a >= 0 ? '+' : ''}${f0(b - a)})`;
    });
    say(`  RSS MB, first → last third after the warm-up (the soak test's measure): ${thirds.join(', ')}`);
    // A process whose RSS peaks mid-run and keeps its pages shows little between the thirds: the peak says it.
    const peak = Math.max(...series.map((x) => x.rss[WATCHED]!));
    say(
      `  ${WATCHED} RSS MB after the warm-up → highest after it → at the end: ${f0(afterWarmUp.sample?.rss[WATCHED] ?? Number.NaN)} → ${f0(peak)} → ${f0(atEnd.sample?.rss[WATCHED] ?? Number.NaN)}${first ? " (the first snapshot's own memory included: compare RSS with BENCH_SOAK_SNAPSHOTS=0)" : ''}`,
    );
    say(`  ${WATCHED} each minute (s: RSS MB / heap used / heap total / old space):`);
    const heapNear = (i: number) => s.samples.slice(i, i + 6).find((x) => x.heap)?.heap;
    const minutes = s.samples.flatMap((x, i) => {
      if (i % 60 !== 0 && i !== s.samples.length - 1) return [];
      const h = heapNear(i);
      return [
        `${f0(x.at)}: ${f0(x.rss[WATCHED]!)}/${f0(h?.usedMb ?? Number.NaN)}/${f0(h?.totalMb ?? Number.NaN)}/${f0(h?.spacesMb.old ?? Number.NaN)}`,
      ];
    });
    say(`    ${minutes.join('  ')}`);
    await run.stopStack();
    if (first && last) growthReport(WATCHED, readHeap(first), readHeap(last));
  }),
);
