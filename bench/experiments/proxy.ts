/**
 * `tsx bench/experiments/proxy.ts`: what a proxy hop costs on this machine, for the gateway findings in
 * bench/README.md. The raw node:http server of the bench, then three proxies in front of it (each a
 * separate process, see bench/proxy-server.ts), at BENCH_CONNECTIONS (32) for 5 s after 1 s, and at one
 * connection: req/s, p50/p99 and the proxy's CPU per request. Needs no database.
 */
import { coresBusy, formatCores, snapshot } from '../lib/cpu.js';
import { measure } from '../lib/load.js';
import { startProxy, startRawServer } from '../lib/raw.js';

const C = Number(process.env.BENCH_CONNECTIONS ?? 32);

const raw = await startRawServer(JSON.stringify({ filler: 'x'.repeat(1750) }));
try {
  const rows: string[] = [];
  const run = async (label: string, url: string, pid: number, connections: number) => {
    const targets = { pids: label === 'raw' ? { raw: raw.pid } : { proxy: pid, raw: raw.pid }, comms: [] };
    const a = snapshot(targets);
    const r = await measure({
      url: `${url}/integrations/external/leads/x`,
      headers: { authorization: 'Bearer x' },
      connections,
      durationS: 5,
      warmupS: 1,
      expectStatus: 200,
    });
    const cores = coresBusy(a, snapshot(targets));
    const per = label === 'raw' ? cores.raw! : cores.proxy!;
    rows.push(
      `${`${label} ${connections}c`.padEnd(20)} ${r.rate.toFixed(0).padStart(7)} req/s  p50 ${r.p50us.toFixed(0).padStart(6)} µs  p99 ${r.p99us.toFixed(0).padStart(6)} µs  ` +
        `${((per / r.rate) * 1e6).toFixed(0).padStart(5)} µs CPU/req | ${formatCores(cores)}`,
    );
    process.stdout.write(`${rows.at(-1)}\n`);
  };
  await run('raw', raw.url, raw.pid, C);
  await run('raw', raw.url, raw.pid, 1);
  for (const kind of (process.env.PROXY_KINDS ?? 'node-http,undici,express-hpm,hpm,hpm-lean').split(',')) {
    const p = await startProxy(kind, raw.url);
    try {
      await run(kind, p.url, p.pid, C);
      await run(kind, p.url, p.pid, 1);
    } finally {
      await p.stop();
    }
  }
} finally {
  await raw.stop();
}
