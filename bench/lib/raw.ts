/**
 * The bench's own servers, each a child process that prints `listening <port>` once it accepts connections:
 * the raw node:http server (bench/raw-server.ts) and the proxies of bench/proxy-server.ts. Stopped by their PID.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface RawServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const BENCH = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

async function startServer(label: string, script: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<RawServer> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(BENCH, script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start within 20 s`)), 20_000);
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code}`)));
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

/** The ceiling of the GET measurement: a bare node:http server answering every request with `body`. */
export const startRawServer = (body: string) => startServer('the raw server', 'raw-server.ts', { RAW_BODY: body });

/**
 * A proxy of bench/proxy-server.ts (PROXY_KIND `kind`) in front of `upstreamUrl`, sending `identity` upstream;
 * `nodeArgs` go to node before the script (e.g. `--cpu-prof`).
 */
export const startProxy = (kind: string, upstreamUrl: string, identity = 'token', nodeArgs: string[] = []) =>
  startServer(`the ${kind} proxy`, 'proxy-server.ts', { PROXY_KIND: kind, UPSTREAM_URL: upstreamUrl, PROXY_IDENTITY: identity }, nodeArgs);

/**
 * chat's list statement behind a bare node:http server (bench/chat/bare-list.ts), on `databaseUrl`; with `viewsTake`,
 * the rows typed and written by chat's own views, `viewsTake` records a page (the contract floor, decision 0273).
 */
export const startBareList = (databaseUrl: string, text: string, values: unknown[], viewsTake?: number) =>
  startServer(viewsTake ? 'the contract list server' : 'the bare list server', 'chat/bare-list.ts', {
    DATABASE_URL: databaseUrl,
    LIST_TEXT: text,
    LIST_VALUES: JSON.stringify(values),
    ...(viewsTake ? { LIST_VIEWS: '1', LIST_TAKE: String(viewsTake) } : {}),
  });
