import { expect } from 'chai';
import { TARGETS } from '../lib/targets.js';
import { type BenchOutcome, disturbedPhases, json, rows, table } from './summary.js';

const outcomes: BenchOutcome[] = [
  {
    bench: 'gateway',
    result: {
      figures: {
        gateway_get_vs_direct: { value: 0.4512, phases: ['GET direct 32c', 'GET gateway 32c'] },
        gateway_added_vs_bare_forward: { value: 1.1, phases: ['GET 1c alternating'] },
        lead_create_vs_pgbench: { value: 0.8, phases: ['POST gateway 32c'] },
      },
      disturbed: ['GET gateway 32c', 'GET raw 1c'],
    },
  },
  { bench: 'webhooks', error: 'the receiver did not start within 20 s' },
  {
    bench: 'chat',
    result: {
      figures: {
        chat_list_p99_vs_pgbench: { value: 2.5, phases: ['GET page 150 8c', 'pgbench page 150 8c'] },
        chat_list_rps_vs_pgbench: { value: 0.5, phases: ['GET first page 1c'] },
        chat_send_cpu_ms: { value: 3.04, phases: ['send 8c'] },
      },
      disturbed: [],
    },
  },
];

describe('bench:all summary', () => {
  const all = rows(outcomes);

  it('has one row per figure of issue 20, in the order of the targets', () => {
    expect(all.map((r) => r.name)).to.deep.equal(Object.keys(TARGETS));
  });

  it('marks each row met or missed against its target, a bound itself meeting it', () => {
    const met = Object.fromEntries(all.map((r) => [r.name, r.met]));
    expect(met).to.deep.include({
      gateway_get_vs_direct: false,
      gateway_added_vs_bare_forward: true,
      lead_create_vs_pgbench: true,
      chat_list_p99_vs_pgbench: false,
      chat_list_rps_vs_pgbench: true,
      chat_send_cpu_ms: false,
    });
  });

  it('shows a figure of a failed bench as not measured and missed', () => {
    const row = all.find((r) => r.name === 'webhooks_vs_post_loop')!;
    expect(row.met).to.equal(false);
    expect(table(all)).to.match(/`webhooks_vs_post_loop` .*\| n\/a .*\| missed/);
  });

  it("names a row's disturbed phases in the table, and every disturbed phase of the run by bench", () => {
    expect(all[0]!.disturbed).to.deep.equal(['GET gateway 32c']);
    expect(table(all).split('\n')[2]).to.match(/\| GET gateway 32c +\|$/);
    expect(disturbedPhases(outcomes)).to.deep.equal(['gateway: GET gateway 32c', 'gateway: GET raw 1c']);
  });

  it('prints a Markdown table with a header, a rule and a row per figure', () => {
    const lines = table(all).split('\n');
    expect(lines).to.have.length(2 + Object.keys(TARGETS).length);
    expect(lines[1]).to.match(/^\| -+ \| -+ \|/);
    expect(new Set(lines.map((l) => l.length)).size).to.equal(1);
  });

  it('ends with one line of JSON: every figure rounded (null when not measured) and the disturbed phases', () => {
    const line = json(all, disturbedPhases(outcomes));
    expect(line).not.to.contain('\n');
    expect(JSON.parse(line)).to.deep.equal({
      gateway_get_vs_direct: 0.451,
      gateway_added_vs_bare_forward: 1.1,
      lead_create_vs_pgbench: 0.8,
      webhooks_vs_post_loop: null,
      webhooks_p99_ms_at_1000: null,
      chat_list_p99_vs_pgbench: 2.5,
      chat_list_rps_vs_pgbench: 0.5,
      chat_send_cpu_ms: 3.04,
      disturbed: ['gateway: GET gateway 32c', 'gateway: GET raw 1c'],
    });
  });
});
