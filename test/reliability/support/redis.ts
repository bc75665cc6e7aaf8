import { type ChildProcess, spawn } from 'node:child_process';
import { eventually } from '@svc/platform/testing';
import { Redis } from 'ioredis';
import { freePort } from '../../support/stack.js';

export interface OwnRedis {
  url: string;
  /** SIGKILL (nothing is persisted: the server runs without a dump or an append-only file). */
  kill(): Promise<void>;
  /** Starts it again on the same port; resolves when it answers PING. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A redis-server of the test's own (from the PATH) on a free port, which it may kill: the shared 6379 is never touched. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const stopped = () =>
    new Promise<void>((r) => (child && child.exitCode === null && child.signalCode === null ? child.once('exit', () => r()) : r()));
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const current = child;
    await eventually(
      async () => {
        if (current.exitCode !== null) throw new Error(`redis-server exited with ${current.exitCode}`);
        const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        r.on('error', () => undefined); // refused while the server starts: the probe tries again
        try {
          await r.connect();
          return (await r.ping()) === 'PONG';
        } finally {
          r.disconnect();
        }
      },
      20_000,
      100,
    );
  };
  const kill = async () => {
    const done = stopped();
    child?.kill('SIGKILL');
    await done;
  };
  await start();
  process.once('exit', () => child?.kill('SIGKILL'));
  return { url, kill, start, close: kill };
}
