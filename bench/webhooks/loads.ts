/** The loads of the webhooks bench: the POST loop (the ceiling), saturation of the pipeline, events at a fixed rate. */
import { Agent, request } from 'undici';
import { f1, say } from '../lib/harness.js';
import { adminQuery } from '../lib/infra.js';
import { percentile } from '../lib/stats.js';
import type { Producer, Receiver } from './ends.js';

// The webhooks service's undici Agent: 64 keep-alive connections per origin, no pipelining (sender.ts).
export const SENDER_CONNECTIONS = 64;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The ceiling: a plain POST loop from this process, the same body, headers of the same shape and the sender's Agent. */
export async function postLoop(
  url: string,
  body: string,
  seconds: number,
  warmup: number,
  concurrency: number,
): Promise<{ rate: number; errors: number; requests: number }> {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: SENDER_CONNECTIONS, pipelining: 1 });
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'svc-webhooks/1.0',
    'x-svc-event': 'lead.created',
    'x-svc-signature': `sha256=${'0'.repeat(64)}`,
    'webhook-id': '00000000-0000-0000-0000-000000000000',
    'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
    'webhook-signature': `v1,${'A'.repeat(44)}`,
  };
  let done = 0;
  let errors = 0;
  let stop = false;
  const worker = async () => {
    while (!stop) {
      try {
        const res = await request(url, { method: 'POST', headers, body, dispatcher: agent });
        for await (const _ of res.body);
        if (res.statusCode === 200) done++;
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await sleep(warmup * 1000);
  const from = done;
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const rate = ((done - from) * 1000) / (performance.now() - t0);
  stop = true;
  await Promise.all(workers);
  await agent.close();
  return { rate, errors, requests: done };
}

/**
 * (a) Saturation: the producer keeps at most `backlog` events between its commits and the receiver, writing
 * transactions of 20 events on 2 connections as fast as that allows; the rate is what the receiver got over
 * `durationS` after `warmupS`.
 */
export async function saturate(
  r: Receiver,
  p: Producer,
  { backlog, durationS, warmupS }: { backlog: number; durationS: number; warmupS: number },
): Promise<{ rate: number; perSecond: number[]; produced: number; delivered: number }> {
  await r.reset();
  let received = 0;
  let stop = false;
  const base = p.produced;
  const poller = (async () => {
    while (!stop) {
      received = (await r.count()).unique;
      await sleep(20);
    }
  })();
  const writer = async (i: number) => {
    while (!stop) {
      if (p.produced - base - received > backlog) {
        await sleep(5);
        continue;
      }
      await p.commit(i, 20);
    }
  };
  const writers = [writer(0), writer(1)];
  await sleep(warmupS * 1000);
  const perSecond: number[] = [];
  const t0 = performance.now();
  const c0 = (await r.count()).unique;
  let last = c0;
  for (let s = 0; s < durationS; s++) {
    await sleep(Math.max(0, t0 + (s + 1) * 1000 - performance.now()));
    const c = (await r.count()).unique;
    perSecond.push(c - last);
    last = c;
  }
  const rate = ((last - c0) * 1000) / (performance.now() - t0);
  stop = true;
  await Promise.all([...writers, poller]);
  return { rate, perSecond, produced: p.produced - base, delivered: (await r.count()).unique };
}

/** Waits until the receiver has every id, or the deadline passes; returns how many are missing. */
export async function drain(r: Receiver, expected: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { unique } = await r.count();
    if (unique >= expected || Date.now() > deadline) return Math.max(0, expected - unique);
    await sleep(100);
  }
}

/**
 * (b) Latency at a fixed rate: one event per transaction, started on a fixed schedule (every 2 ms the
 * events due by then), spread over the producer's connections; commit time taken when COMMIT returns.
 */
export async function atRate(r: Receiver, p: Producer, rate: number, seconds: number) {
  await r.reset();
  const committed = new Map<string, number>();
  const committedWall = new Map<string, number>();
  const total = Math.round(rate * seconds);
  let started = 0;
  let lagged = 0;
  const busy = new Array(p.size).fill(0);
  const inflight = new Set<Promise<void>>();
  const t0 = performance.now();
  while (started < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
    for (; started < due; started++) {
      // The least busy connection (pg queues queries per connection).
      let i = 0;
      for (let k = 1; k < busy.length; k++) if (busy[k] < busy[i]) i = k;
      if (busy[i] > 0) lagged++;
      busy[i]++;
      const q = p.commit(i, 1).then(({ ids, committedUs, committedWallMs }) => {
        busy[i]--;
        committed.set(ids[0]!, committedUs);
        committedWall.set(ids[0]!, committedWallMs);
      });
      inflight.add(q);
      q.finally(() => inflight.delete(q));
    }
    await sleep(2);
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - t0) / 1000;
  const missing = await drain(r, total, 30_000);
  return { committed, committedWall, total, elapsed, lagged, missing };
}

/** Latencies of a run of atRate, and where the time went (outside the phase: its CPU is not the pipeline's). */
export async function latencies(r: Receiver, run: Awaited<ReturnType<typeof atRate>>, database: string) {
  const { committed, committedWall, total, elapsed, lagged, missing } = run;
  const receipts = await r.take();
  const lat: number[] = [];
  for (const [id, at] of committed) {
    const got = receipts.get(id);
    if (got !== undefined) lat.push((got - at) / 1000);
  }
  const sorted = Float64Array.from(lat).sort();
  if (process.env.BENCH_WH_DEBUG_SLOW) {
    const t0 = Math.min(...committed.values());
    const slow = [...committed]
      .map(([id, at]) => [(at - t0) / 1000, ((receipts.get(id) ?? at) - at) / 1000] as const)
      .filter(([, l]) => l > 25);
    say(
      `  slow (>25 ms) events: ${slow.length}; at (ms since start): ${slow.map(([t, l]) => `${t.toFixed(0)}:${l.toFixed(0)}`).join(' ')}`,
    );
  }
  // Where the time went, from the rows' own timestamps (wall clock, µs): the relay's transaction start
  // (published_at = now() of the transaction that claimed and marked it), the consumer's insert of the
  // delivery, and the recorded attempt (after the 2xx).
  const stageRows = await adminQuery<{ id: string; published: Date; issued: Date; attempted: Date }>(
    `select o.id, o.published_at as published, d.created_at as issued, a.at as attempted
       from crm.outbox o join webhooks.deliveries d on d.event_id = o.id::text
       join webhooks.delivery_attempts a on a.delivery_id = d.id
      where o.id in (${[...committedWall.keys()].map((id) => `'${id}'`).join(',')})`,
    database,
  );
  // Each relay transaction stamps its rows with its own now(): distinct stamps are the relay's batches.
  const [batches] = await adminQuery<{ relay: string; events: string }>(
    `select count(distinct published_at) as relay, count(*) as events from crm.outbox
      where id in (${[...committedWall.keys()].map((id) => `'${id}'`).join(',')})`,
    database,
  );
  const relayBatch = Number(batches?.events ?? 0) / Math.max(1, Number(batches?.relay ?? 0));
  if (process.env.BENCH_WH_DEBUG_SLOW) {
    const t0 = Math.min(...committedWall.values());
    const rows = stageRows
      .map((r) => {
        const c = committedWall.get(r.id)!;
        return {
          at: c - t0,
          total: r.attempted.getTime() - c,
          relay: r.published.getTime() - c,
          issue: r.issued.getTime() - r.published.getTime(),
          send: r.attempted.getTime() - r.issued.getTime(),
        };
      })
      .filter((r) => r.total > 25)
      .sort((a, b) => a.at - b.at);
    say(
      `  slow stages (at: commit->relay/relay->issued/issued->recorded; at 0 = ${new Date(t0).toISOString()}): ${rows.map((r) => `${r.at.toFixed(0)}: ${r.relay.toFixed(0)}/${r.issue}/${r.send}`).join('  ')}`,
    );
  }
  const stage = (f: (r: (typeof stageRows)[number], c: number) => number) => {
    const v = Float64Array.from(stageRows.map((r) => f(r, committedWall.get(r.id)!))).sort();
    return `p50 ${f1(percentile(v, 50))} / p99 ${f1(percentile(v, 99))}`;
  };
  const stages = [
    `commit -> relay transaction start ${stage((r, c) => r.published.getTime() - c)}`,
    `relay transaction start -> delivery inserted ${stage((r) => r.issued.getTime() - r.published.getTime())}`,
    `delivery inserted -> attempt recorded ${stage((r) => r.attempted.getTime() - r.issued.getTime())}`,
  ];
  return {
    relayBatch,
    stages,
    offered: total / elapsed,
    count: sorted.length,
    missing,
    lagged,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}
