/**
 * `tsx bench/experiments/gateway-trees.ts label=/path/to/tree ...`: the gateway of several source trees (e.g. `git
 * archive <commit>` extracted, with this repository's node_modules hard-linked in) against a bare node:http forward,
 * at ONE connection, requests taking turns one by one as in bench:all's 1c figure (decision 0242).
 *
 * Everything stands in front of one cheap upstream in its own process: it answers PROBE_BODY_BYTES (2,226, the
 * lead's body) with crm's answer headers (its request id echoed, the route template), so what differs between the
 * targets is the hop alone, not crm's or Postgres' moments. crm's key look-up is a fake gRPC resolver in this process
 * (one call per key per KEY_CACHE_TTL_MS). Each round (PROBE_ROUNDS of PROBE_WINDOW_S after PROBE_WARMUP_S) gives
 * each target's p50; printed per tree: the median of the rounds' (tree − upstream) / (forward − upstream) and of the
 * rounds' differences tree − forward, and per pair of trees the median of their rounds' differences.
 *
 * PROBE_ORDER=shuffled draws the targets' order anew for each turn instead of rotating it (each target then follows
 * each other one as often).
 *
 * PROBE_FLOOR=1 adds a target: the bare forward plus the least of what the gateway must do per request
 * (`proxy-server.ts` kind `node-http-floor`, decision 0268), with its own ratio to the forward's.
 *
 * PROBE_UNDICI=1 adds a target: a bare forward on undici's `dispatch` with a handler object (`proxy-server.ts` kind
 * `undici-dispatch`), with its own ratio to the node:http forward's.
 *
 * PROBE_CPU_S=n then measures each tree's (and the forward's, and the floor's) CPU per request (utime + stime from /proc, 100 Hz) under autocannon at
 * PROBE_CPU_C (8) connections for n seconds after 1 s, trees taking turns in PROBE_CPU_ROUNDS (4) rounds: a figure
 * with less noise than a latency at one connection, where processes differ by tens of µs in the same moments.
 *
 * PROBE_PROFILE_DIR=dir writes each tree's gateway CPU profile there as `<label>.cpuprofile` (node --cpu-prof), and the floor's.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { oneUpstream, startKeyResolver } from '../../gateway/test/support/fake-crm.js';
import { f0, f3, say } from '../lib/harness.js';
import { REDIS_URL } from '../lib/infra.js';
import { interleaved, type Target } from '../lib/interleaved.js';
import { measure } from '../lib/load.js';
import { type RawServer, startProxy } from '../lib/raw.js';
import { median } from '../lib/stats.js';

const ROUNDS = Number(process.env.PROBE_ROUNDS ?? 12);
const WINDOW_S = Number(process.env.PROBE_WINDOW_S ?? 3);
const WARMUP_S = Number(process.env.PROBE_WARMUP_S ?? 2);
const BODY_BYTES = Number(process.env.PROBE_BODY_BYTES ?? 2226);
const CPU_S = Number(process.env.PROBE_CPU_S ?? 0);
const CPU_C = Number(process.env.PROBE_CPU_C ?? 8);
const CPU_ROUNDS = Number(process.env.PROBE_CPU_ROUNDS ?? 4);
const PROFILE_DIR = process.env.PROBE_PROFILE_DIR;
const profileArgs = (label: string) =>
  PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${label}.cpuprofile`] : [];
const PLAIN = `svc_${randomBytes(32).toString('base64url').slice(0, 43)}`;

const UPSTREAM = `
const http = require('node:http');
const body = Buffer.from(JSON.stringify({ id: 'x', title: 'y'.repeat(${BODY_BYTES} - 22) }));
const server = http.createServer({ keepAliveTimeout: 65000 }, (req, res) => {
  req.resume();
  res.writeHead(200, {
    'x-request-id': req.headers['x-request-id'] ?? '',
    'x-route-template': '/integrations/external/leads/{id}',
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.length,
  });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => process.stdout.write('listening ' + server.address().port + '\\n'));
process.once('SIGTERM', () => { server.close(() => process.exit(0)); server.closeAllConnections(); });
`;

function started(child: ChildProcess, label: string, pattern: RegExp): Promise<number> {
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${label} did not start within 60 s`)), 60_000);
    child.once('exit', (code) => fail(new Error(`${label} exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = pattern.exec(line);
      if (m) {
        clearTimeout(timer);
        ok(Number(m[1]));
      }
    });
  });
}

const at = (r: Record<string, number>, name: string) => r[name] ?? Number.NaN;
const children: ChildProcess[] = [];
const stopAll = () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
};

const trees = process.argv.slice(2).map((arg) => {
  const [label, dir] = arg.split('=');
  if (!label || !dir) throw new Error('usage: gateway-trees.ts label=/path/to/tree ...');
  return { label, dir: resolve(dir) };
});
if (trees.length === 0) throw new Error('usage: gateway-trees.ts label=/path/to/tree ...');

const resolver = await startKeyResolver({ [PLAIN]: 'key-probe' }, 'c-probe', 'u-probe');
let forward: RawServer | undefined;
let floor: RawServer | undefined;
let undiciForward: RawServer | undefined;
try {
  const upstreamChild = spawn(process.execPath, ['-e', UPSTREAM], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(upstreamChild);
  const upstream = `http://127.0.0.1:${await started(upstreamChild, 'upstream', /^listening (\d+)$/)}`;
  forward = await startProxy('node-http', upstream, 'x'.repeat(400));
  if (process.env.PROBE_FLOOR === '1') floor = await startProxy('node-http-floor', upstream, 'x'.repeat(400), profileArgs('floor'));
  if (process.env.PROBE_UNDICI === '1')
    undiciForward = await startProxy('undici-dispatch', upstream, 'x'.repeat(400), profileArgs('undici'));
  const gateways: Record<string, string> = {};
  const pids: Record<string, number> = {};
  for (const tree of trees) {
    const child = spawn(process.execPath, [...profileArgs(tree.label), '--import', 'tsx', resolve(tree.dir, 'gateway/src/main.ts')], {
      cwd: tree.dir,
      env: {
        ...process.env,
        REDIS_URL,
        REDIS_KEY_PREFIX: `probe${randomBytes(4).toString('hex')}:`,
        ADMIN_TOKEN: 'probe-admin-token-0123456789',
        IDENTITY_TOKEN_SECRET: 'p'.repeat(32),
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
        ACCESS_LOG: 'false',
        RATE_LIMIT_PER_MINUTE: '100000000',
        ...oneUpstream(upstream, resolver.port),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const port = await started(child, `gateway ${tree.label}`, /"port":(\d+),"metricsPort"/);
    gateways[tree.label] = `http://127.0.0.1:${port}`;
    pids[tree.label] = child.pid ?? 0;
  }
  const path = '/integrations/external/leads/01a2195a-6122-71fe-a37c-9bf613a698cb';
  const targets: Record<string, Target> = {
    upstream: { url: `${upstream}${path}`, headers: { 'x-svc-identity': 'x'.repeat(400) } },
    forward: { url: `${forward.url}${path}`, headers: { authorization: `Bearer ${PLAIN}` } },
  };
  for (const [label, url] of Object.entries(gateways))
    targets[label] = { url: `${url}${path}`, headers: { authorization: `Bearer ${PLAIN}` } };
  if (floor) targets.floor = { url: `${floor.url}${path}`, headers: { authorization: `Bearer ${PLAIN}` } };
  if (undiciForward) targets.undici = { url: `${undiciForward.url}${path}`, headers: { authorization: `Bearer ${PLAIN}` } };
  say(`trees: ${trees.map((t) => `${t.label}=${t.dir}`).join(', ')}; ${ROUNDS} rounds of ${WINDOW_S} s after ${WARMUP_S} s`);
  const rounds = await interleaved(targets, ROUNDS, WINDOW_S, WARMUP_S, process.env.PROBE_ORDER === 'shuffled');
  for (const [i, r] of rounds.entries())
    say(
      `  round ${i + 1}: ${Object.entries(r)
        .map(([n, us]) => `${n} ${f0(us)}`)
        .join(', ')} µs (p50)`,
    );
  for (const label of [...trees.map((t) => t.label), ...(floor ? ['floor'] : []), ...(undiciForward ? ['undici'] : [])]) {
    const ratios = rounds.map((r) => (at(r, label) - at(r, 'upstream')) / (at(r, 'forward') - at(r, 'upstream')));
    const over = rounds.map((r) => at(r, label) - at(r, 'forward'));
    say(
      `${label}: adds ${f0(median(rounds.map((r) => at(r, label) - at(r, 'upstream'))))} µs (forward ${f0(median(rounds.map((r) => at(r, 'forward') - at(r, 'upstream'))))}); ` +
        `ratio to the forward's, median of rounds ${f3(median(ratios))} (${f3(Math.min(...ratios))}–${f3(Math.max(...ratios))}); ` +
        `over the forward ${f0(median(over))} µs (${f0(Math.min(...over))}–${f0(Math.max(...over))})`,
    );
  }
  for (let i = 0; i < trees.length; i++)
    for (let j = i + 1; j < trees.length; j++) {
      const [a, b] = [trees[i]!.label, trees[j]!.label];
      const d = rounds.map((r) => at(r, b) - at(r, a));
      say(`${b} − ${a}: median of rounds ${f0(median(d))} µs (${f0(Math.min(...d))}–${f0(Math.max(...d))})`);
    }
  if (CPU_S > 0) {
    // The bare forward too: what the gateway spends beyond it is its own work.
    const labels = [...trees.map((t) => t.label), 'forward', ...(floor ? ['floor'] : []), ...(undiciForward ? ['undici'] : [])];
    const urls: Record<string, string> = {
      ...gateways,
      forward: forward.url,
      ...(floor ? { floor: floor.url } : {}),
      ...(undiciForward ? { undici: undiciForward.url } : {}),
    };
    pids.forward = forward.pid;
    if (floor) pids.floor = floor.pid;
    if (undiciForward) pids.undici = undiciForward.pid;
    const perRequest = new Map<string, number[]>(labels.map((l) => [l, []]));
    for (let r = 0; r < CPU_ROUNDS; r++)
      for (let i = 0; i < labels.length; i++) {
        const label = labels[(r + i) % labels.length]!;
        const spec = {
          url: `${urls[label]}${path}`,
          headers: { authorization: `Bearer ${PLAIN}` },
          connections: CPU_C,
          expectStatus: 200,
        };
        await measure({ ...spec, durationS: 1, warmupS: 0 });
        const before = cpuSeconds(pids[label]!);
        const done = await measure({ ...spec, durationS: CPU_S, warmupS: 0 });
        perRequest.get(label)!.push(((cpuSeconds(pids[label]!) - before) / done.count) * 1e6);
      }
    for (const [label, us] of perRequest)
      say(
        `${label}: CPU per request at ${CPU_C} connections ${us.map((u) => u.toFixed(1)).join(', ')} µs (median ${median(us).toFixed(1)})`,
      );
  }
} finally {
  stopAll();
  await forward?.stop();
  await floor?.stop();
  await undiciForward?.stop();
  await resolver.stop(100);
}

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
