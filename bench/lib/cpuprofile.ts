/**
 * Summary of a V8 .cpuprofile (node --cpu-prof), optionally restricted to a time window: where the
 * samples were spent by their own frame (self) and by everything under a frame (inclusive), grouped
 * by package (node_modules/<pkg>), Node internals, this repository's code, GC and idle.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Monotonic microseconds, the clock of a profile's timestamps (CLOCK_MONOTONIC on Linux, any process). */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

export function categoryOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(garbage collector)') return '(garbage collector)';
    if (functionName === '(program)') return '(program: native, outside JS)';
    if (functionName === '(root)') return '(root)';
    return '(native)';
  }
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const repo = /\/(gateway|services\/[^/]+|scripts|bench)\/src\/|\/(gateway|services\/[^/]+)\//.exec(url);
  if (repo) return `repo:${repo[1] ?? repo[2]}`;
  return url;
}

export interface ProfileSummary {
  sampledMs: number;
  busyMs: number;
  self: [string, number][];
  inclusive: [string, number][];
  topFunctions: [string, number][];
}

export function summarize(file: string, window?: { fromUs: number; toUs: number }): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const fn = new Map<string, number>();
  let t = p.startTime;
  let sampled = 0;
  let busy = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const node = byId.get(p.samples[i]!);
    if (!node) continue;
    // The sample's weight is the interval until the next sample.
    const w = (p.timeDeltas[i + 1] ?? dt) / 1000;
    sampled += w;
    const cat = categoryOf(node.callFrame);
    self.set(cat, (self.get(cat) ?? 0) + w);
    if (cat !== '(idle)') busy += w;
    const name = `${node.callFrame.functionName || '(anonymous)'} ${shortUrl(node.callFrame.url)}:${node.callFrame.lineNumber + 1}`;
    fn.set(name, (fn.get(name) ?? 0) + w);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const c = categoryOf(byId.get(id)!.callFrame);
      if (!seen.has(c)) {
        seen.add(c);
        inclusive.set(c, (inclusive.get(c) ?? 0) + w);
      }
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { sampledMs: sampled, busyMs: busy, self: sorted(self), inclusive: sorted(inclusive), topFunctions: sorted(fn) };
}

function shortUrl(url: string): string {
  if (!url) return '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  return url.replace(/^file:\/\/.*?\/(gateway|services|scripts|bench)\//, '$1/');
}

export function formatSummary(s: ProfileSummary, top = 15): string {
  const pct = (ms: number) => `${((100 * ms) / Math.max(1, s.busyMs)).toFixed(1).padStart(5)}%`;
  const lines = [
    `  sampled ${(s.sampledMs / 1000).toFixed(1)} s, busy (not idle) ${(s.busyMs / 1000).toFixed(1)} s; shares are of busy time`,
  ];
  lines.push('  self time by group:');
  for (const [k, v] of s.self.filter(([k]) => k !== '(idle)').slice(0, top)) lines.push(`    ${pct(v)}  ${k}`);
  lines.push('  inclusive time by group (a frame of the group anywhere on the stack):');
  for (const [k, v] of s.inclusive.filter(([k]) => k !== '(idle)' && k !== '(root)').slice(0, top)) lines.push(`    ${pct(v)}  ${k}`);
  lines.push('  top functions by self time:');
  for (const [k, v] of s.topFunctions.filter(([k]) => !k.startsWith('(idle)')).slice(0, top)) lines.push(`    ${pct(v)}  ${k}`);
  return lines.join('\n');
}

/**
 * The profiles a bench's processes wrote under `profDir/<process>` at their exit, each summarised over every phase
 * `relevant` selects for that process: one heading and one summary per pair.
 */
export function phaseProfiles(
  profDir: string,
  phases: { name: string; fromUs: number; toUs: number }[],
  relevant: Record<string, (phase: string) => boolean>,
  top = 15,
): string[] {
  const out: string[] = [];
  for (const [proc, wanted] of Object.entries(relevant)) {
    const dir = path.join(profDir, proc);
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
    for (const file of files) {
      for (const p of phases.filter((x) => wanted(x.name))) {
        out.push(`### ${proc} during "${p.name}" (${path.join(dir, file)})`, formatSummary(summarize(path.join(dir, file), p), top));
      }
    }
  }
  return out;
}
