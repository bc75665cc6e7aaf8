/**
 * The comparison of two heap snapshots of one process, printed: `tsx bench/soak/compare.ts <first> <second>`
 * compares snapshots already written (a run's `.data/bench-soak/<run>/heap`); `npm run bench:soak` prints the same.
 */
import { fileURLToPath } from 'node:url';
import { f1, say } from '../lib/harness.js';
import { compare, type Heap, newObjectHolders, readHeap } from './heapsnapshot.js';

const mb = (bytes: number) => bytes / 2 ** 20;

export function growthReport(name: string, a: Heap, b: Heap): void {
  const rows = compare(a, b);
  say();
  say(`## ${name}: what grew between the snapshots (self size by constructor, top 15)`);
  say(`  ${'constructor'.padEnd(40)} ${'count'.padStart(19)} ${'self MB'.padStart(17)} ${'Δ MB'.padStart(8)}`);
  for (const r of rows.slice(0, 15)) {
    const counts = `${r.count[0]}→${r.count[1]}`;
    const sizes = `${f1(mb(r.bytes[0]))}→${f1(mb(r.bytes[1]))}`;
    say(
      `  ${r.group.slice(0, 40).padEnd(40)} ${counts.padStart(19)} ${sizes.padStart(17)} ${mb(r.bytes[1] - r.bytes[0])
        .toFixed(2)
        .padStart(8)}`,
    );
  }
  const total = (i: 0 | 1) => mb(rows.reduce((n, r) => n + r.bytes[i], 0));
  say(`  all objects: ${f1(total(0))} → ${f1(total(1))} MB (live: a snapshot collects garbage first)`);
  say();
  say('## What holds the objects allocated between the snapshots (shortest retaining path, nearest first)');
  for (const [group, holders] of newObjectHolders(
    a,
    b,
    rows.slice(0, 5).map((r) => r.group),
  )) {
    say(`  ${group}`);
    for (const h of holders) say(`    ${f1(mb(h.bytes)).padStart(6)} MB ${String(h.count).padStart(8)} × ${h.path}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [first, second] = process.argv.slice(2);
  if (!first || !second) {
    say('usage: tsx bench/soak/compare.ts <first.heapsnapshot> <second.heapsnapshot>');
    process.exit(2);
  }
  growthReport('the process', readHeap(first), readHeap(second));
}
