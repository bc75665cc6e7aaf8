/**
 * The end of `npm run bench:all`: one table of issue 20's figures against their targets (Markdown, so that it goes
 * into bench/README.md as printed) and one line of JSON with the same figures.
 */
import { type FigureName, meets, type SomeFigures, TARGETS, targetText } from '../lib/targets.js';

/** What one bench of the run handed back, or why it did not. */
export interface BenchOutcome {
  bench: string;
  result?: SomeFigures;
  error?: string;
}

export interface Row {
  name: FigureName;
  /** NaN when the bench that measures it failed or did not measure it. */
  value: number;
  met: boolean;
  /** The row's phases during which the rest of the machine was busy. */
  disturbed: string[];
}

/** Every figure of TARGETS, in its order, from whichever bench measured it. */
export function rows(outcomes: BenchOutcome[]): Row[] {
  return (Object.keys(TARGETS) as FigureName[]).map((name) => {
    const from = outcomes.find((o) => o.result && name in o.result.figures);
    const figure = from?.result?.figures[name];
    const value = figure?.value ?? Number.NaN;
    const disturbed = figure?.phases.filter((p) => from?.result?.disturbed.includes(p)) ?? [];
    return { name, value, met: meets(name, value), disturbed };
  });
}

/** Every disturbed phase of the run, named `<bench>: <phase>`. */
export const disturbedPhases = (outcomes: BenchOutcome[]): string[] =>
  outcomes.flatMap((o) => (o.result?.disturbed ?? []).map((p) => `${o.bench}: ${p}`));

const shown = (v: number) => (Number.isFinite(v) ? Number(v.toFixed(3)).toString() : 'n/a');

export function table(all: Row[]): string {
  const head = ['Figure', 'What it is', 'Measured', 'Target', 'Met', 'Disturbed phases'];
  const body = all.map((r) => [
    `\`${r.name}\``,
    TARGETS[r.name].what,
    shown(r.value),
    targetText(r.name),
    r.met ? 'met' : 'missed',
    r.disturbed.length ? r.disturbed.join(', ') : '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

/** One line: every figure (null when not measured) and the disturbed phases. */
export function json(all: Row[], disturbed: string[]): string {
  const figures = Object.fromEntries(all.map((r) => [r.name, Number.isFinite(r.value) ? Number(r.value.toFixed(3)) : null]));
  return JSON.stringify({ ...figures, disturbed });
}
