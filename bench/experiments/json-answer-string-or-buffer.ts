/**
 * Decision 0251 (not part of bench:all): a node:http server's CPU per ~71 KB JSON answer (about a chat list page)
 * written as a string (`res.end(text)`, as the platform's `jsonText` does) or as `Buffer.from(text)`, the two taking
 * turns in rounds of 3,000 answers to a client in another process (8 keep-alive connections).
 * Run: `npx tsx bench/experiments/json-answer-string-or-buffer.ts`.
 */
import { fork } from 'node:child_process';
import http from 'node:http';

if (process.argv[2] === 'client') {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const get = (path: string) =>
    new Promise<void>((resolve, reject) =>
      http
        .get({ host: '127.0.0.1', port: Number(process.argv[3]), path, agent }, (res) => {
          res.on('data', () => undefined);
          res.on('end', resolve);
        })
        .on('error', reject),
    );
  process.on('message', async (m: { path: string; n: number }) => {
    let left = m.n;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (left-- > 0) await get(m.path);
      }),
    );
    process.send!('done');
  });
} else {
  const body = JSON.stringify({
    records: Array.from({ length: 50 }, (_, i) => ({
      id: `0190a0a0-0000-7000-8000-${String(i).padStart(12, '0')}`,
      name: `Contact ${i}`,
      at: new Date().toISOString(),
      n: i,
      text: 'x'.repeat(1300),
    })),
  });
  const server = http.createServer((req, res) => {
    const text = JSON.parse(JSON.stringify(body)) as string; // a fresh string each time, as a stringify makes
    if (req.url === '/buffer') {
      const b = Buffer.from(text);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': b.length });
      res.end(b);
    } else {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const child = fork(process.argv[1]!, ['client', String(port)], { execArgv: ['--import', 'tsx'] });
  const run = (path: string, n: number) =>
    new Promise<number>((resolve) => {
      const c0 = process.cpuUsage();
      child.once('message', () => {
        const c = process.cpuUsage(c0);
        resolve((c.user + c.system) / n);
      });
      child.send({ path, n });
    });
  console.log('body bytes', body.length);
  for (let r = 0; r < 4; r++) {
    const a = await run('/string', 3000);
    const b = await run('/buffer', 3000);
    console.log(`server CPU per answer: string ${a.toFixed(0)} us, Buffer ${b.toFixed(0)} us`);
  }
  child.kill();
  server.close();
}
