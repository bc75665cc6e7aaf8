/** Starts bench/raw-server.ts as a child process and stops it by its PID. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface RawServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'raw-server.ts');

export async function startRawServer(body: string): Promise<RawServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    env: { ...process.env, RAW_BODY: body },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the raw server did not start within 20 s')), 20_000);
    child.once('exit', (code) => reject(new Error(`the raw server exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /^listening (\d+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
