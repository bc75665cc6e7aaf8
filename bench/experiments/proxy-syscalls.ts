/**
 * `tsx bench/experiments/proxy-syscalls.ts`: the syscalls a proxy makes per request (strace -c on its process) over
 * 1,000 sequential GETs through it to the bench's raw node:http server, for each proxy kind of proxy-server.ts
 * (`PROXY_KINDS`, default node-http,hpm-eject). Shows whether a proxy's extra cost is I/O or JavaScript. Needs strace
 * and no database.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { startProxy, startRawServer } from '../lib/raw.js';

const N = 1000;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = (url: string) =>
  new Promise<void>((resolve, reject) =>
    http
      .get(url, { agent, headers: { authorization: 'Bearer x' } }, (r) => {
        r.resume();
        r.on('end', () => resolve());
      })
      .on('error', reject),
  );

const raw = await startRawServer(JSON.stringify({ filler: 'x'.repeat(1750) }));
try {
  for (const kind of (process.env.PROXY_KINDS ?? 'node-http,hpm-eject').split(',')) {
    const proxy = await startProxy(kind, raw.url);
    const url = `${proxy.url}/integrations/external/leads/x`;
    for (let i = 0; i < 2 * N; i++) await get(url); // warm up
    const strace = spawn('strace', ['-f', '-c', '-p', String(proxy.pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let report = '';
    strace.stderr!.on('data', (d) => (report += d));
    await new Promise((r) => setTimeout(r, 500)); // attached
    for (let i = 0; i < N; i++) await get(url);
    strace.kill('SIGINT');
    await new Promise((r) => strace.once('exit', r));
    process.stdout.write(`${kind}: syscalls per request over ${N} sequential requests\n`);
    for (const line of report.split('\n')) {
      const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/.exec(line);
      if (m) process.stdout.write(`  ${(Number(m[1]) / N).toFixed(2).padStart(6)} ${m[2]}\n`);
    }
    await proxy.stop();
  }
} finally {
  await raw.stop();
}
