/**
 * What the gateway's access-log line costs (decision 0244): a node:http server answering the lead's 2,226 bytes at
 * 32 connections, stdout a pipe read by this process, in turn with pino's `logger.info` line (`pino`), the line by
 * hand (`hand`), the line by hand on pino's asynchronous destination (`hand-async`) and no line (`off`). Prints the
 * server's own CPU per request for each mode and round.
 *
 *   npx tsx bench/experiments/access-log.ts [rounds] [modes,comma,separated]
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@svc/platform/logging';
import { pino } from 'pino';
import { accessLogOf } from '../../gateway/src/access-log.js';
import { measure as load } from '../lib/load.js';

const entry = (path: string) => ({
  request_id: 'b3c1f1de-0000-4000-8000-000000000000',
  method: 'GET',
  route: '/integrations/external/leads/{id}',
  path,
  status: 200,
  duration_ms: 1.234,
  key_id: '01a218eb-13c0-76d1-8c69-bdda2f2a6663',
  client_address: '127.0.0.1',
});

function serve(mode: string): void {
  const logger = createLogger(
    'gateway',
    mode === 'off' ? 'warn' : 'info',
    mode === 'hand-async' ? pino.destination({ dest: 1, sync: false }) : undefined,
  );
  const byHand = accessLogOf(logger);
  const body = Buffer.alloc(2226, 'a');
  let served = 0;
  let since = process.cpuUsage();
  const server = http.createServer((req, res) => {
    if (req.url === '/reset') {
      served = 0;
      since = process.cpuUsage();
      return res.end();
    }
    if (req.url === '/cpu') {
      const c = process.cpuUsage(since);
      return res.end(String((c.user + c.system) / served));
    }
    served++;
    const path = req.url ?? '';
    res.on('finish', () => (mode === 'pino' || mode === 'off' ? logger.info(entry(path), 'request') : byHand(entry(path))));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
  });
  server.listen(0, '127.0.0.1', () => process.stderr.write(`PORT ${(server.address() as AddressInfo).port}\n`));
}

async function measure(mode: string): Promise<{ mode: string; rps: number; cpuUs: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, 'serve', mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.resume();
  const port = await new Promise<string>((resolve) =>
    child.stderr.on('data', (d) => {
      const m = /PORT (\d+)/.exec(String(d));
      if (m?.[1]) resolve(m[1]);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const spec = { url: `${url}/x`, connections: 32, warmupS: 2, expectStatus: 200 };
  await load({ ...spec, durationS: 2 });
  await fetch(`${url}/reset`);
  const r = await load({ ...spec, warmupS: 0, durationS: 5 });
  const cpuUs = Number(await (await fetch(`${url}/cpu`)).text());
  child.kill('SIGTERM');
  return { mode, rps: Math.round(r.rate), cpuUs: Math.round(cpuUs * 10) / 10 };
}

if (process.argv[2] === 'serve') serve(process.argv[3] ?? 'pino');
else {
  const rounds = Number(process.argv[2] ?? 3);
  const modes = (process.argv[3] ?? 'pino,hand,off').split(',');
  for (let i = 0; i < rounds; i++) for (const mode of modes) console.log(JSON.stringify(await measure(mode)));
}
