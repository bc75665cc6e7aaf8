/**
 * The hot paths' figures of issue 20 and their targets, each a ratio to a reference measured in the same run (or an
 * absolute figure where the issue sets one). The benches print their verdicts against these, and `npm run bench:all`
 * prints one table of them.
 */

export interface Target {
  /** What the figure is, as the table's first column says it. */
  what: string;
  /** The figure meets its target at or above `min`, or at or below `max`. */
  min?: number;
  max?: number;
}

export const TARGETS = {
  gateway_get_vs_direct: { what: 'GET /leads/{id} 32c: gateway req/s / crm direct req/s', min: 0.6 },
  gateway_added_vs_bare_forward: {
    what: "GET 1c, interleaved requests: gateway's added p50 / a bare node:http forward's",
    max: 1.2,
  },
  lead_create_vs_pgbench: { what: "POST /leads 32c: gateway req/s / pgbench of crm's statements", min: 0.75 },
  webhooks_vs_post_loop: { what: 'webhooks: deliveries/s / a bare POST loop to the receiver', min: 0.3 },
  webhooks_p99_ms_at_1000: { what: 'webhooks: commit -> 2xx p99 ms at 1,000 events/s', max: 25 },
  chat_list_p99_vs_pgbench: { what: "GET /chats: p99 / pgbench of chat's statements (worst phase)", max: 2 },
  chat_list_rps_vs_pgbench: { what: "GET /chats: req/s / pgbench of chat's statements (worst phase)", min: 0.5 },
  chat_send_cpu_ms: { what: 'POST /chats/{id}/messages 8c: chat CPU ms per send', max: 1 },
} as const satisfies Record<string, Target>;

export type FigureName = keyof typeof TARGETS;

/** Whether `value` meets the target of `name` (a figure that could not be measured does not). */
export function meets(name: FigureName, value: number): boolean {
  const t: Target = TARGETS[name];
  if (!Number.isFinite(value)) return false;
  return (t.min === undefined || value >= t.min) && (t.max === undefined || value <= t.max);
}

/** The target as printed: `>= 0.6`, `<= 25`. */
export function targetText(name: FigureName): string {
  const t: Target = TARGETS[name];
  return [t.min === undefined ? '' : `>= ${t.min}`, t.max === undefined ? '' : `<= ${t.max}`].filter(Boolean).join(' and ');
}

/** A measured figure and the phases it was computed from (a disturbed phase makes it disturbed). */
export interface Measured {
  value: number;
  phases: string[];
}

/** What a bench hands to bench:all: its figures, and the phases during which the rest of the machine was busy. */
export interface BenchFigures<N extends FigureName = FigureName> {
  figures: Record<N, Measured>;
  disturbed: string[];
}

/** Any bench's figures, as bench:all collects them. */
export interface SomeFigures {
  figures: Partial<Record<FigureName, Measured>>;
  disturbed: string[];
}
