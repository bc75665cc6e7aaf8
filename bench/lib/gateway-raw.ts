/**
 * A second gateway process whose crm upstream is the raw node:http server: the gateway's own cost
 * (key auth, rate limit, proxy hop) in front of an upstream that costs next to nothing. It shares the
 * stack's Redis prefix, key look-up (crm gRPC) and identity secret; only CRM_URL and PORT differ.
 */
import path from 'node:path';
import { defaultConsoleSink, delay, ManagedProcess, pinoClassifier } from '../../scripts/processes.js';
import { findFreePort, REPO_ROOT, type Stack } from '../../scripts/stack.js';

export interface ExtraGateway {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startGatewayInFrontOf(
  stack: Stack,
  upstreamUrl: string,
  logDir: string,
  extraEnv: Record<string, string> = {},
): Promise<ExtraGateway> {
  const port = await findFreePort(20000 + Math.floor(Math.random() * 10000));
  const proc = new ManagedProcess({
    name: 'gateway-raw',
    command: process.execPath,
    args: ['--import', 'tsx', path.join(REPO_ROOT, 'gateway', 'src', 'main.ts')],
    cwd: REPO_ROOT,
    env: { ...process.env, ...stack.env.gateway, PORT: String(port), METRICS_PORT: '0', CRM_URL: upstreamUrl, ...extraEnv },
    logDir,
    classify: pinoClassifier,
    sink: defaultConsoleSink,
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (!proc.running) throw new Error(`gateway-raw ${proc.describeExit()}; see ${proc.log.file}`);
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await proc.stop(5000);
      throw new Error(`gateway-raw did not answer within 60 s; see ${proc.log.file}`);
    }
    await delay(200);
  }
  return { url, pid: proc.pid, stop: async () => void (await proc.stop(10_000)) };
}
