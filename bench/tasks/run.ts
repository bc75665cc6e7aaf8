/**
 * `npm run bench:tasks`: task creation and the grouped listing of 1,000 tasks, through the gateway against
 * the whole system run as processes (tasks asks crm over gRPC for every write and read). Prints, never
 * asserts. See bench/tasks/README.md.
 *
 * Knobs (environment): BENCH_CONNECTIONS (32), BENCH_DURATION (10 s), BENCH_WARMUP (2 s), BENCH_ONE_DURATION
 * (5 s) for the one-connection runs, BENCH_TASKS_PARENTS (200) and BENCH_TASKS_SUBTASKS (4): the listed company
 * has PARENTS × (1 + SUBTASKS) tasks, 1,000 by default.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { AdminClient } from '../../scripts/demo.js';
import { launchStack, REPO_ROOT, type Stack } from '../../scripts/stack.js';
import { type CpuSnapshot, coresBusy, formatCores, snapshot } from '../lib/cpu.js';
import { adminQuery, benchStackOptions, createDatabase, releaseResources, runBench } from '../lib/infra.js';
import { type LoadResult, measure } from '../lib/load.js';
import { seed } from '../lib/seed.js';
import { figures } from '../lib/stats.js';

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : Number(v);
};
const C = num('BENCH_CONNECTIONS', 32);
const DURATION = num('BENCH_DURATION', 10);
const WARMUP = num('BENCH_WARMUP', 2);
const ONE_DURATION = num('BENCH_ONE_DURATION', 5);
const PARENTS = num('BENCH_TASKS_PARENTS', 200);
const SUBTASKS = num('BENCH_TASKS_SUBTASKS', 4);

const runId = `${Date.now()}`;
const database = `svc_bench_tasks_${runId}`;
const natsStream = `BENCHTASKS_${runId}`;
const subjectPrefix = `benchtasks${runId}`;
const redisPrefix = `benchtasks${runId}:`;
const outDir = path.join(REPO_ROOT, '.data', 'bench-tasks', runId);

const say = (s = '') => process.stdout.write(`${s}\n`);
const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toString() : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

let stack: Stack | undefined;
const run = { database, databaseCreated: false, natsStream, redisPrefix };
const disturbed: string[] = [];

function cpuTargets() {
  const pids: Record<string, number | undefined> = {};
  if (stack) for (const [name, pid] of Object.entries(stack.pids)) pids[name] = pid;
  return { pids, comms: ['postgres', 'redis-server', 'nats-server'] };
}

async function phase<T>(label: string, work: () => Promise<T>): Promise<{ value: T; cores: Record<string, number> }> {
  const before: CpuSnapshot = snapshot(cpuTargets());
  const value = await work();
  const cores = coresBusy(before, snapshot(cpuTargets()));
  const other = cores['other processes'] ?? 0;
  if (other > 0.15) disturbed.push(`${label} (other processes: ${other.toFixed(2)} cores)`);
  return { value, cores };
}

const header = () => say(`  ${''.padEnd(58)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
function line(label: string, r: LoadResult, cores: Record<string, number>): void {
  const bad = r.unexpected ? `   UNEXPECTED: ${r.unexpected} (statuses ${JSON.stringify(r.statuses)})` : '';
  say(`  ${label.padEnd(58)} ${f1(r.rate).padStart(9)} ${f1(r.p50us / 1000).padStart(9)} ${f1(r.p99us / 1000).padStart(9)}${bad}`);
  const per = cores.tasks !== undefined && r.rate > 0 ? `; tasks ${f0((cores.tasks / r.rate) * 1e6)} µs CPU per request` : '';
  say(`  ${''.padEnd(60)}cpu cores: ${formatCores(cores)}${per}`);
}

async function post(url: string, key: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as { id: string };
}

async function main(): Promise<void> {
  const cpus = os.cpus();
  const [pgVersion] = await adminQuery<{ server_version: string }>('show server_version');
  say('Tasks benchmark');
  say(
    `  machine: ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GB; Node ${process.version}; Postgres ${pgVersion?.server_version}`,
  );
  say(`  database ${database}, logs ${path.join(outDir, 'logs')}`);
  await createDatabase(database);
  run.databaseCreated = true;
  const adminToken = randomBytes(24).toString('hex');
  stack = await launchStack({
    ...benchStackOptions({
      database,
      natsStream,
      subjectPrefix,
      redisPrefix,
      outDir,
      adminToken,
      identitySecret: randomBytes(32).toString('hex'),
    }),
    consoleSink: (l) => process.stderr.write(`${l}\n`),
    onUnexpectedExit: (name, info) => process.stderr.write(`${name} exited unexpectedly (${JSON.stringify(info)})\n`),
  });
  const gw = stack.gatewayUrl;
  const tasksUrl = `${gw}/integrations/external/tasks`;
  const admin = new AdminClient(gw, adminToken);

  // Company 1: creation. A meeting type (default duration), open and completion stages, a tag, the seed's lead.
  const s1 = await seed(gw, adminToken);
  const base1 = `/companies/${s1.companyId}`;
  const meeting = await admin.create(`${base1}/task-types`, { name: 'Meeting', is_meeting: true, default_duration_minutes: 30 });
  await admin.create(`${base1}/task-stages`, { name: 'To do' });
  await admin.create(`${base1}/task-stages`, { name: 'Done', is_completion: true });
  const tag = await admin.create(`${base1}/tags`, { name: 'Bench' });
  const createBody = JSON.stringify({
    crm_task_type_id: meeting.id,
    title: 'Bench meeting',
    start_date: '2026-12-01T13:00:00Z',
    crm_lead_id: s1.leadId,
    tags: [tag.id],
    reminders_minutes: [10],
    meeting_participants: ['guest@bench.example.com'],
    meeting_mode: 'online',
    description: '<p>Agenda with <b>bold</b> and a <a href="https://example.com">link</a></p>',
  });
  const headers1 = { authorization: `Bearer ${s1.key}`, 'content-type': 'application/json' };
  await post(tasksUrl, s1.key, JSON.parse(createBody));

  say();
  say(`POST /tasks through the gateway (type, stage, lead, tag and responsible checked; lead link, 1 tag, HTML description)`);
  header();
  const one = await phase('create, 1 connection', () =>
    measure({
      url: tasksUrl,
      method: 'POST',
      headers: headers1,
      body: createBody,
      connections: 1,
      durationS: ONE_DURATION,
      warmupS: 1,
      expectStatus: 201,
    }),
  );
  line('create, 1 connection', one.value, one.cores);
  const many = await phase(`create, ${C} connections`, () =>
    measure({
      url: tasksUrl,
      method: 'POST',
      headers: headers1,
      body: createBody,
      connections: C,
      durationS: DURATION,
      warmupS: WARMUP,
      expectStatus: 201,
    }),
  );
  line(`create, ${C} connections`, many.value, many.cores);

  // Company 2: exactly PARENTS × (1 + SUBTASKS) tasks, listed grouped.
  const s2 = await seed(gw, adminToken);
  const base2 = `/companies/${s2.companyId}`;
  const call2 = await admin.create(`${base2}/task-types`, { name: 'Call' });
  await admin.create(`${base2}/task-stages`, { name: 'To do' });
  const total = PARENTS * (1 + SUBTASKS);
  const t0 = performance.now();
  const durations: number[] = [];
  const timed = async (body: unknown) => {
    const t = performance.now();
    const r = await post(tasksUrl, s2.key, body);
    durations.push((performance.now() - t) * 1000);
    return r;
  };
  for (let p = 0; p < PARENTS; p += 8) {
    await Promise.all(
      Array.from({ length: Math.min(8, PARENTS - p) }, async (_, k) => {
        const i = p + k;
        const day = String(1 + (i % 28)).padStart(2, '0');
        const parent = await timed({ crm_task_type_id: call2.id, title: `Parent ${i}`, start_date: `2027-01-${day}T09:00:00Z` });
        for (let j = 0; j < SUBTASKS; j++) {
          await timed({
            crm_task_type_id: call2.id,
            title: `Sub ${i}.${j}`,
            parent_task_id: parent.id,
            start_date: `2027-01-${day}T1${j}:00:00Z`,
          });
        }
      }),
    );
  }
  const fill = figures(Float64Array.from(durations), (performance.now() - t0) / 1000);
  say();
  say(
    `seeded ${total} tasks (${PARENTS} parents with ${SUBTASKS} subtasks each) through POST /tasks, 8 at a time: ${f1(fill.rate)} req/s, p50 ${f1(fill.p50us / 1000)} ms, p99 ${f1(fill.p99us / 1000)} ms`,
  );

  const headers2 = { authorization: `Bearer ${s2.key}` };
  const check = await fetch(`${tasksUrl}?hierarchy_mode=grouped&take=100`, { headers: headers2 });
  const checked = (await check.json()) as { total: number; records: { subtasks: unknown[] }[] };
  const perPage = checked.records.reduce((n, r) => n + 1 + r.subtasks.length, 0);
  const bytes = JSON.stringify(checked).length;
  say();
  say(
    `GET /tasks?hierarchy_mode=grouped&take=100 over ${total} tasks: total ${checked.total} top-level, ${perPage} tasks per page (${Math.round(bytes / 1024)} KB)`,
  );
  header();
  for (const [label, url] of [
    ['grouped page of 100 parents (500 tasks), 1 connection', `${tasksUrl}?hierarchy_mode=grouped&take=100`],
    ['grouped page of 20 parents (100 tasks), 1 connection', `${tasksUrl}?hierarchy_mode=grouped&take=20`],
  ] as const) {
    const r = await phase(label, () =>
      measure({ url, headers: headers2, connections: 1, durationS: ONE_DURATION, warmupS: 1, expectStatus: 200 }),
    );
    line(label, r.value, r.cores);
  }
  const loaded = await phase(`grouped page of 100 parents, ${C} connections`, () =>
    measure({
      url: `${tasksUrl}?hierarchy_mode=grouped&take=100`,
      headers: headers2,
      connections: C,
      durationS: DURATION,
      warmupS: WARMUP,
      expectStatus: 200,
    }),
  );
  line(`grouped page of 100 parents, ${C} connections`, loaded.value, loaded.cores);

  // The whole listing: every one of the 1,000 tasks, page after page by next_cursor, one walk after another.
  const walks: number[] = [];
  const w0 = performance.now();
  const walk = await phase('walk', async () => {
    while (performance.now() - w0 < ONE_DURATION * 1000) {
      const t = performance.now();
      let seen = 0;
      let cursor: string | null = null;
      do {
        const res = await fetch(`${tasksUrl}?hierarchy_mode=grouped&take=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: headers2 });
        const body = (await res.json()) as { records: { subtasks: unknown[] }[]; next_cursor: string | null };
        seen += body.records.reduce((n, r) => n + 1 + r.subtasks.length, 0);
        cursor = body.next_cursor;
      } while (cursor);
      if (seen !== total) throw new Error(`the walk saw ${seen} tasks, not ${total}`);
      walks.push((performance.now() - t) * 1000);
    }
  });
  const wf = figures(Float64Array.from(walks), (performance.now() - w0) / 1000);
  say(
    `  all ${total} tasks grouped, by next_cursor (${Math.ceil(PARENTS / 100)} pages), 1 client: ${f1(wf.rate)} walks/s, p50 ${f1(wf.p50us / 1000)} ms, p99 ${f1(wf.p99us / 1000)} ms`,
  );
  say(`  ${''.padEnd(60)}cpu cores: ${formatCores(walk.cores)}`);
  if (disturbed.length) say(`\nDISTURBED (other load on the machine; figures not representative): ${disturbed.join('; ')}`);
}

await runBench(main, async () => {
  const notes: string[] = [];
  await stack?.stop().catch((e: Error) => notes.push(`stack: ${e.message}`));
  notes.push(...(await releaseResources(run)));
  say();
  say(`cleanup: stopped the stack; ${notes.join('; ')}`);
});
