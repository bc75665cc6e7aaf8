import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { CallResult } from '../support/client.js';
import { type World, world } from './support/world.js';

/** Requests per second of the mixed traffic (CI keeps it small; the bench's ceilings are in the README). */
const RATE = Number(process.env.RELIABILITY_SOAK_RATE ?? 40);
const SECONDS = Number(process.env.RELIABILITY_SOAK_SECONDS ?? 60);
/** The first samples are the warm-up (JIT, pools, caches filling) and not part of the trend. */
const WARM_UP_SHARE = 0.25;
/** Allowed growth of a process's resident memory between the first and the last third of the run. */
const GROWTH_MB = Number(process.env.RELIABILITY_SOAK_GROWTH_MB ?? 24);

const rssMb = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

describe('reliability: a soak of mixed traffic, memory of every process sampled', () => {
  let w: World;
  before(async function () {
    this.timeout(180_000);
    w = await world();
  });

  it(`serves ${RATE} req/s of mixed traffic for ${SECONDS} s without an error and without memory growth`, async function () {
    this.timeout(SECONDS * 1000 + 120_000);
    const { own } = w;
    let leadId = own.ids.lead;
    // The mix of an integration: reads dominate, a third writes (leads, tasks, updates). An answer other than the
    // expected one is counted under its operation, status and error message, so a failed run says who refused what.
    type Op = { what: string; run: () => Promise<CallResult>; expected: number };
    const mix: Op[] = [
      { what: 'GET lead', expected: 200, run: () => w.call('GET', `/integrations/external/leads/${leadId}`, { token: own.key }) },
      { what: 'GET leads', expected: 200, run: () => w.call('GET', '/integrations/external/leads?take=20', { token: own.key }) },
      {
        what: 'GET tasks',
        expected: 200,
        run: () => w.call('GET', `/integrations/external/tasks?crm_lead_id=${own.ids.lead}`, { token: own.key }),
      },
      { what: 'GET deal', expected: 200, run: () => w.call('GET', `/integrations/external/deals/${own.ids.deal}`, { token: own.key }) },
      {
        what: 'POST lead',
        expected: 201,
        run: async () => {
          const res = await w.call('POST', '/integrations/external/leads', { token: own.key, body: { title: 'Soak lead', visibility: 1 } });
          if (res.status === 201) leadId = res.body.id;
          return res;
        },
      },
      {
        what: 'PUT lead',
        expected: 200,
        run: () => w.call('PUT', `/integrations/external/leads/${own.ids.lead}`, { token: own.key, body: { title: `Soak ${Date.now()}` } }),
      },
      {
        what: 'POST task',
        expected: 201,
        run: () =>
          w.call('POST', '/integrations/external/tasks', {
            token: own.key,
            body: { title: 'Soak task', crm_task_type_id: own.ids.task_type },
          }),
      },
    ];
    const pids = Object.fromEntries(Object.entries(w.system.deployed).map(([name, d]) => [name, d.child.proc.pid!]));
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(pids).map((n) => [n, []]));
    const errors = new Map<string, number>();
    const latencies: number[] = [];
    let sent = 0;
    let inFlight = 0;
    let skipped = 0;
    const started = Date.now();
    const interval = 1000 / RATE;
    await new Promise<void>((done) => {
      const tick = setInterval(() => {
        const due = Math.floor((Date.now() - started) / interval);
        while (sent < due) {
          // An open loop: requests leave on the schedule, not when the previous one answered; past 256 in flight the
          // system is not keeping up, which the error count shows.
          if (inFlight >= 256) {
            skipped++;
            sent++;
            continue;
          }
          const op = mix[sent % mix.length]!;
          sent++;
          inFlight++;
          const t0 = performance.now();
          const count = (key: string) => errors.set(key, (errors.get(key) ?? 0) + 1);
          op.run()
            .then(
              (res) => {
                latencies.push(performance.now() - t0);
                if (res.status !== op.expected) count(`${op.what} ${res.status} ${res.body?.message ?? res.text.slice(0, 80)}`);
              },
              (err: Error) => count(`${op.what} ${err.message}`),
            )
            .finally(() => inFlight--);
        }
        if (Date.now() - started >= SECONDS * 1000) {
          clearInterval(tick);
          clearInterval(sampler);
          done();
        }
      }, 5);
      const sampler = setInterval(() => {
        for (const [name, pid] of Object.entries(pids)) samples[name]!.push(rssMb(pid));
      }, 1000);
    });
    while (inFlight > 0) await new Promise((r) => setImmediate(r));

    const sorted = [...latencies].sort((a, b) => a - b);
    const growth: Record<string, { first: number; last: number }> = {};
    for (const [name, series] of Object.entries(samples)) {
      const steady = series.slice(Math.floor(series.length * WARM_UP_SHARE));
      const third = Math.max(1, Math.floor(steady.length / 3));
      growth[name] = { first: Math.round(median(steady.slice(0, third))), last: Math.round(median(steady.slice(-third))) };
    }
    console.log(
      `      ${sent} requests at ${RATE}/s over ${SECONDS} s (skipped ${skipped}), errors ${errors.size ? JSON.stringify([...errors]) : 0}, ` +
        `p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)]?.toFixed(1)} ms`,
    );
    console.log(
      `      RSS MB first→last third: ${Object.entries(growth)
        .map(([n, g]) => `${n} ${g.first}→${g.last}`)
        .join(', ')}`,
    );
    expect([...errors], 'answers other than the expected status').to.deep.equal([]);
    expect(skipped, 'requests not sent because 256 were in flight').to.equal(0);
    for (const [name, g] of Object.entries(growth)) expect(g.last - g.first, `${name} RSS growth (MB)`).to.be.below(GROWTH_MB);
  });
});
