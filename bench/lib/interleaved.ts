/**
 * One connection to each of several targets, one request at a time, taking turns request by request (decision 0242):
 * every target sees the same moments of the machine, so a drift (another process, a checkpoint) lands on all of them
 * alike and cancels in their differences. The client's own cost is the same for every target and cancels too.
 */
import http from 'node:http';
import { percentile } from './stats.js';

export interface Target {
  url: string;
  headers: Record<string, string>;
}

/** Each round's median latency per target, µs. */
export type RoundMedians<N extends string> = Record<N, number>[];

function once(agent: http.Agent, url: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get(url, { agent, headers }, (res) => {
      res.on('data', () => {});
      res.on('end', () =>
        res.statusCode === 200 ? resolve((performance.now() - t0) * 1000) : reject(new Error(`${url} answered ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
  });
}

/**
 * `rounds` rounds of `roundS` seconds after `warmupS`; the order of the targets rotates from one turn to the next, or
 * with `shuffled` is drawn anew for each turn, so that each target follows each other one as often.
 */
export async function interleaved<N extends string>(
  targets: Record<N, Target>,
  rounds: number,
  roundS: number,
  warmupS: number,
  shuffled = false,
): Promise<RoundMedians<N>> {
  const names = Object.keys(targets) as N[];
  const conns = names.map((name) => ({
    name,
    url: new URL(targets[name].url),
    headers: targets[name].headers,
    agent: new http.Agent({ keepAlive: true, maxSockets: 1 }),
  }));
  const order = conns.map((_, i) => i);
  const turn = async (k: number, samples?: Map<N, number[]>) => {
    if (shuffled)
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [order[i], order[j]] = [order[j] as number, order[i] as number];
      }
    for (let i = 0; i < conns.length; i++) {
      const c = conns[shuffled ? (order[i] as number) : (k + i) % conns.length] as (typeof conns)[number];
      const us = await once(c.agent, c.url, c.headers);
      samples?.get(c.name)?.push(us);
    }
  };
  try {
    let k = 0;
    for (const until = performance.now() + warmupS * 1000; performance.now() < until; ) await turn(k++);
    const out: RoundMedians<N> = [];
    for (let r = 0; r < rounds; r++) {
      const samples = new Map(names.map((n) => [n, [] as number[]]));
      for (const until = performance.now() + roundS * 1000; performance.now() < until; ) await turn(k++, samples);
      out.push(Object.fromEntries(names.map((n) => [n, percentile(Float64Array.from(samples.get(n)!).sort(), 50)])) as Record<N, number>);
    }
    return out;
  } finally {
    for (const c of conns) c.agent.destroy();
  }
}
