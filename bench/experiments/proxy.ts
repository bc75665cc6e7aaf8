/**
 * `tsx bench/experiments/proxy.ts`: what a proxy hop costs on this machine, for the gateway findings in
 * bench/README.md. The raw node:http server of the bench, then three proxies in front of it (each a
 * separate process, see proxy-server.ts), at BENCH_CONNECTIONS (32) for 5 s after 1 s, and at one
 * connection: req/s, p50/p99 and the proxy's CPU per request. Needs no database.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { coresBusy, formatCores, snapshot } from '../lib/cpu.js';
import { measure } from '../lib/load.js';
import { startRawServer } from '../lib/raw.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const C = Number(process.env.BENCH_CONNECTIONS ?? 32);

async function startProxy(kind: string, upstream: string): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'proxy-server.ts')], {
    env: { ...process.env, PROXY_KIND: kind, UPSTREAM_URL: upstream },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} proxy exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = /^listening (\d+)$/.exec(l);
      if (m) resolve(Number(m[1]));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

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
