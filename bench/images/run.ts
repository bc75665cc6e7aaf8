/**
 * `npm run bench:images`: what the images' bundled JavaScript (deploy/scripts/bundle.mjs, decision 0105) saves over
 * running the TypeScript sources with tsx: time from spawn to the first 200 on /healthz, resident memory once
 * started, and the bytes the runtime needs on disk. tasks (a service, against the real Postgres and NATS) and the
 * gateway (Redis). Prints, never asserts.
 *
 * Knobs: BENCH_STARTS (7) starts of each variant; the first of each is dropped (a cold file cache).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../scripts/stack.js';
import { createDatabase, databaseUrl, deleteRedisKeys, deleteStream, dropDatabase, NATS_URL, REDIS_URL } from '../lib/infra.js';

const STARTS = Number(process.env.BENCH_STARTS || 7);

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

function bytes(path: string): number {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((n, e) => n + bytes(join(path, e)), 0);
}

/** Spawns, polls /healthz every 5 ms, reads VmRSS once it answers, stops the process. */
async function start(args: string[], cwd: string, env: NodeJS.ProcessEnv, port: number): Promise<{ ms: number; rssMb: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd, env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - t0 > 60_000) throw new Error(`${args.join(' ')}: no /healthz within 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const ms = performance.now() - t0;
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return { ms, rssMb: Number(rss?.[1] ?? 0) / 1024 };
  } finally {
    await new Promise<void>((r) => {
      if (child.exitCode !== null) return r();
      child.once('exit', () => r());
      child.kill('SIGTERM');
    });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main() {
  const out = mkdtempSync(join(tmpdir(), 'bench-images-'));
  const stamp = Date.now().toString(36);
  const db = `svc_bench_img_${stamp}`;
  await createDatabase(db);
  try {
    const bundle = spawn(process.execPath, ['deploy/scripts/bundle.mjs', 'tasks', 'gateway', '--out', out], {
      cwd: REPO_ROOT,
      stdio: 'inherit',
    });
    await new Promise((r) => bundle.once('exit', r));
    const secret = 'x'.repeat(48);
    const port = await freePort();
    const grpc = await freePort();
    const tasksEnv = {
      HTTP_PORT: String(port),
      GRPC_PORT: String(grpc),
      METRICS_PORT: '0',
      DATABASE_URL: databaseUrl(db),
      NATS_URL,
      NATS_STREAM: `BENCH_IMG_${stamp}`,
      EVENT_SUBJECT_PREFIX: `benchimg${stamp}`,
      IDENTITY_TOKEN_SECRET: secret,
      CRM_GRPC_URL: '127.0.0.1:1',
      LOG_LEVEL: 'warn',
    };
    const peer = 'http://127.0.0.1:1';
    const gatewayEnv = {
      PORT: String(port),
      METRICS_PORT: '0',
      REDIS_URL,
      REDIS_KEY_PREFIX: `benchimg${stamp}:`,
      ADMIN_TOKEN: 'a'.repeat(32),
      IDENTITY_TOKEN_SECRET: secret,
      CRM_URL: peer,
      TASKS_URL: peer,
      CHAT_URL: peer,
      FILES_URL: peer,
      WEBHOOKS_URL: peer,
      CRM_GRPC_URL: '127.0.0.1:1',
      LOG_LEVEL: 'warn',
    };
    const variants = [
      ['tasks', 'tsx', ['--import', 'tsx', 'services/tasks/src/main.ts'], REPO_ROOT, tasksEnv],
      ['tasks', 'bundle', ['main.mjs'], join(out, 'tasks'), tasksEnv],
      ['tasks', 'bundle+maps', ['--enable-source-maps', 'main.mjs'], join(out, 'tasks'), tasksEnv],
      ['gateway', 'tsx', ['--import', 'tsx', 'gateway/src/main.ts'], REPO_ROOT, gatewayEnv],
      ['gateway', 'bundle', ['main.mjs'], join(out, 'gateway'), gatewayEnv],
      ['gateway', 'bundle+maps', ['--enable-source-maps', 'main.mjs'], join(out, 'gateway'), gatewayEnv],
    ] as const;
    console.log(`\nstart to first 200 on /healthz, median of ${STARTS - 1} starts (first dropped); RSS once answering`);
    for (const [name, kind, args, cwd, env] of variants) {
      const runs = [];
      for (let i = 0; i < STARTS; i++) runs.push(await start([...args], cwd, env, port));
      const kept = runs.slice(1);
      console.log(
        `  ${name.padEnd(8)} ${kind.padEnd(11)} ${median(kept.map((r) => r.ms))
          .toFixed(0)
          .padStart(5)} ms` +
          `  (min ${Math.min(...kept.map((r) => r.ms)).toFixed(0)}, max ${Math.max(...kept.map((r) => r.ms)).toFixed(0)})` +
          `  RSS ${median(kept.map((r) => r.rssMb)).toFixed(0)} MiB`,
      );
    }
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
    const sources = ['proto', 'services', 'gateway', 'packages'].reduce((n, d) => n + bytes(join(REPO_ROOT, d)), 0);
    console.log('\non disk, what the runtime needs (the Node base image aside)');
    console.log(`  tsx at run time: the monorepo's node_modules ${mb(bytes(join(REPO_ROOT, 'node_modules')))} + sources ${mb(sources)}`);
    for (const name of ['tasks', 'gateway']) {
      const dir = join(out, name);
      const maps = readdirSync(dir)
        .filter((f) => f.endsWith('.map'))
        .reduce((n, f) => n + bytes(join(dir, f)), 0);
      console.log(`  ${name} bundle: ${mb(bytes(dir))} (of which source maps ${mb(maps)})`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
    await dropDatabase(db).catch(() => undefined);
    await deleteStream(`BENCH_IMG_${stamp}`).catch(() => undefined);
    await deleteRedisKeys(`benchimg${stamp}:`).catch(() => undefined);
  }
}

await main();
