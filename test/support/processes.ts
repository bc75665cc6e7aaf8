import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { eventually } from '@svc/platform/testing';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');

export interface Child {
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs one of the repository's TypeScript entry points as its own Node process. */
export function spawnEntry(entry: string, env: Record<string, string>): Child {
  return spawnNode(['--import', 'tsx', resolve(REPO_ROOT, entry)], env);
}

/** Runs a JavaScript file (a bundle) on plain Node, without tsx. */
export function spawnScript(file: string, env: Record<string, string>): Child {
  return spawnNode([file], env);
}

function spawnNode(args: string[], env: Record<string, string>): Child {
  const proc = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (c) => (out += c));
  proc.stderr?.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return {
    proc,
    output: () => out,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** The port a service or gateway logged when it started listening (run it with PORT=0 and LOG_LEVEL=info). */
export async function loggedPort(child: Child, field: 'port' | 'httpPort' | 'metricsPort' = 'port', timeoutMs = 30_000): Promise<number> {
  return eventually(
    () => {
      for (const line of child.output().split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as Record<string, unknown>;
        if (typeof entry[field] === 'number') return entry[field] as number;
      }
      if (child.proc.exitCode !== null) throw new Error(`exited early:\n${child.output()}`);
      return undefined;
    },
    timeoutMs,
    50,
  );
}

export async function waitReady(url: string, timeoutMs = 30_000): Promise<void> {
  await eventually(async () => (await fetch(`${url}/readyz`).catch(() => undefined))?.ok, timeoutMs, 100);
}
