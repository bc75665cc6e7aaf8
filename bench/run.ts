/**
 * `npm run bench`: throughput and latency of the gateway and the lead path, each figure printed next
 * to a ceiling measured in the same run on the same machine. Prints, never asserts. See bench/README.md.
 *
 * Knobs (environment): BENCH_CONNECTIONS (32), BENCH_DURATION (10 s), BENCH_WARMUP (2 s),
 * BENCH_ONE_DURATION (5 s) and BENCH_ONE_WARMUP (1 s) for the one-connection runs, BENCH_ONE_ROUNDS (8) rounds of
 * BENCH_ONE_WINDOW (1 s) windows for the alternating one-connection comparison,
 * BENCH_STAGE_DURATION (4 s) for the saturating runs of the gateway stage breakdown, BENCH_STAGES=0 to
 * skip that breakdown, BENCH_PROFILE=1 to write CPU profiles of the gateways and crm (node --cpu-prof)
 * and print a summary per phase, BENCH_PGBENCH_THREADS (1).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../scripts/stack.js';
import { formatSummary, summarize } from './lib/cpuprofile.js';
import { type ExtraGateway, startGatewayInFrontOf } from './lib/gateway-raw.js';
import { BenchRun, f0, f1, f3, num, ratio, say, trend, verdict } from './lib/harness.js';
import { adminQuery } from './lib/infra.js';
import { type LoadSpec, measure } from './lib/load.js';
import { formatActivity } from './lib/pgactivity.js';
import { leadCreationScript, leadReadScript, type PgbenchResult, pgbench } from './lib/pgbench.js';
import { type RawServer, startRawServer } from './lib/raw.js';
import { BENCH_RATE_LIMIT, createLead, type Seeded, seed } from './lib/seed.js';

const C = num('BENCH_CONNECTIONS', 32);
const DURATION = num('BENCH_DURATION', 10);
const WARMUP = num('BENCH_WARMUP', 2);
const ONE_DURATION = num('BENCH_ONE_DURATION', 5);
const ONE_WARMUP = num('BENCH_ONE_WARMUP', 1);
const ONE_ROUNDS = num('BENCH_ONE_ROUNDS', 8);
const ONE_WINDOW = num('BENCH_ONE_WINDOW', 1);
const STAGE_DURATION = num('BENCH_STAGE_DURATION', 4);
const STAGES = process.env.BENCH_STAGES !== '0';
const PROFILE = process.env.BENCH_PROFILE === '1';
const PGBENCH_THREADS = num('BENCH_PGBENCH_THREADS', 1);

const TARGET_GATEWAY_OF_RAW = 0.1;
const TARGET_ADDED_MEDIAN_US = 300;
const TARGET_CREATE_OF_PGBENCH = 0.25;

const bench = new BenchRun('bench');
const { database, outDir, phases, phase, sampledPhase, header, line } = bench;
const profDir = path.join(outDir, 'prof');
const profEnv = (name: string) => ({ NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.join(profDir, name)}` });

let raw: RawServer | undefined;
let gatewayRaw: ExtraGateway | undefined;

async function main(): Promise<void> {
  await bench.preamble(
    'svc bench',
    `${C} connections for ${DURATION} s after a ${WARMUP} s warm-up; one connection for ${ONE_DURATION} s after ${ONE_WARMUP} s` +
      `${PROFILE ? '; PROFILING gateway and crm (slower)' : ''}`,
  );
  const stack = await bench.launch(PROFILE ? { gateway: profEnv('gateway'), crm: profEnv('crm') } : undefined);
  const poolMax = stack.env.crm.DB_POOL_MAX ?? '10';
  say(`  crm DB pool: ${poolMax} connections${stack.env.crm.DB_POOL_MAX ? '' : ' (service default)'}`);

  const s: Seeded = await seed(stack.gatewayUrl, bench.adminToken);
  say(`seeded company ${s.companyId}, key ${s.keyId} (permissions ["*"], rate_limit_per_minute ${BENCH_RATE_LIMIT}), lead ${s.leadId}`);

  const keyAuth = { authorization: `Bearer ${s.key}` };
  const direct = await bench.directHeaders(s);

  // The lead detail body, as the ceiling's fixed answer.
  const first = await fetch(`${stack.gatewayUrl}/integrations/external/leads/${s.leadId}`, { headers: keyAuth });
  const body = await first.text();
  if (first.status !== 200) throw new Error(`GET lead through the gateway: ${first.status} ${body.slice(0, 300)}`);
  const check = await fetch(`${stack.serviceUrls.crm}/integrations/external/leads/${s.leadId}`, { headers: direct });
  if (check.status !== 200) throw new Error(`GET lead from crm directly: ${check.status} ${(await check.text()).slice(0, 300)}`);
  await check.arrayBuffer();
  raw = await startRawServer(body);
  bench.track('raw node:http', raw.pid);
  say(`raw node:http ceiling at ${raw.url} (pid ${raw.pid}) answers a fixed ${body.length}-byte JSON (the lead detail body)`);
  say();

  const pgbenchSpec = (name: string, script: string, clients: number, durationS: number, warmupS: number) =>
    bench.pgbenchSpec(name, script, clients, durationS, warmupS, PGBENCH_THREADS);
  const onPgbench = bench.onPgbench;
  const ids = { companyId: s.companyId, userId: s.userId };
  const leadSql = await bench.leadSql();

  // Each GET phase reads its own fresh lead, so that each phase's views can be checked (1d).
  const freshLead = () => createLead(stack.gatewayUrl, s.key, 'Bench read');
  const many = { connections: C, durationS: DURATION, warmupS: WARMUP };
  const one = { connections: 1, durationS: ONE_DURATION, warmupS: ONE_WARMUP };
  const getSpec = (url: string, headers: Record<string, string>, shape: typeof many): LoadSpec => ({
    url,
    headers,
    expectStatus: 200,
    ...shape,
  });
  const readLeads: { label: string; id: string }[] = [];
  const runGet = async (label: string, shape: typeof many, target: 'raw' | 'direct' | 'gateway') => {
    if (target === 'raw') return phase(label, () => measure(getSpec(raw!.url, {}, shape)));
    const id = await freshLead();
    readLeads.push({ label, id });
    const base = target === 'direct' ? stack.serviceUrls.crm : stack.gatewayUrl;
    return phase(label, () => measure(getSpec(`${base}/integrations/external/leads/${id}`, target === 'direct' ? direct : keyAuth, shape)));
  };
  const runGetPgbench = async (label: string, clients: number, durationS: number, warmupS: number) => {
    const id = await freshLead();
    readLeads.push({ label, id });
    return phase(label, () =>
      pgbench(
        pgbenchSpec(`lead-read-${clients}c`, leadReadScript(leadSql, { ...ids, leadId: id }), clients, durationS, warmupS),
        onPgbench,
      ),
    );
  };

  // The services start cold (JIT, the ORM's caches, empty DB pools): one warm-up of the whole path,
  // through the gateway and straight to crm, before anything is measured.
  const warmLead = await freshLead();
  await measure(
    getSpec(`${stack.gatewayUrl}/integrations/external/leads/${warmLead}`, keyAuth, { ...many, durationS: WARMUP, warmupS: 0 }),
  );
  await measure(
    getSpec(`${stack.serviceUrls.crm}/integrations/external/leads/${warmLead}`, direct, { ...many, durationS: WARMUP, warmupS: 0 }),
  );

  say(`## 1a. GET /integrations/external/leads/{id} at ${C} connections (${DURATION} s after ${WARMUP} s warm-up)`);
  header();
  const rawMany = await runGet(`GET raw ${C}c`, many, 'raw');
  line('raw node:http, fixed JSON (ceiling)', rawMany.value, rawMany.cores, 'raw node:http');
  const directMany = await runGet(`GET direct ${C}c`, many, 'direct');
  line('crm direct (x-svc-identity token)', directMany.value, directMany.cores, 'crm');
  const gwMany = await runGet(`GET gateway ${C}c`, many, 'gateway');
  line('gateway (key auth + rate limit + proxy)', gwMany.value, gwMany.cores, 'gateway');
  const pgGetMany = await runGetPgbench(`GET pgbench ${C}c`, C, DURATION, WARMUP);
  line("reference: pgbench, crm's GET statements only", pgGetMany.value, pgGetMany.cores, 'postgres');
  const gwOfRaw = ratio(gwMany.value.rate, rawMany.value.rate);
  say(
    `  ratios: gateway/raw ${f3(gwOfRaw)} (target >= ${TARGET_GATEWAY_OF_RAW}: ${verdict(gwOfRaw >= TARGET_GATEWAY_OF_RAW)}); ` +
      `direct/raw ${f3(ratio(directMany.value.rate, rawMany.value.rate))}; gateway/direct ${f3(ratio(gwMany.value.rate, directMany.value.rate))}; ` +
      `direct/pgbench ${f3(ratio(directMany.value.rate, pgGetMany.value.rate))}`,
  );
  say(`  per-second responses: direct ${trend(directMany.value)}`);
  say(`                        gateway ${trend(gwMany.value)}`);
  say();

  say(`## 1b. The same GET at ONE connection (${ONE_DURATION} s after ${ONE_WARMUP} s warm-up)`);
  header();
  const rawOne = await runGet('GET raw 1c', one, 'raw');
  line('raw node:http, fixed JSON (ceiling)', rawOne.value, rawOne.cores, 'raw node:http');
  const directOne = await runGet('GET direct 1c', one, 'direct');
  line('crm direct (x-svc-identity token)', directOne.value, directOne.cores, 'crm');
  const gwOne = await runGet('GET gateway 1c', one, 'gateway');
  line('gateway (key auth + rate limit + proxy)', gwOne.value, gwOne.cores, 'gateway');
  const pgGetOne = await runGetPgbench('GET pgbench 1c', 1, ONE_DURATION, ONE_WARMUP);
  line("reference: pgbench, crm's GET statements only", pgGetOne.value, pgGetOne.cores, 'postgres');
  const added = gwOne.value.p50us - directOne.value.p50us;
  say(
    `  added by the gateway at the median: gateway p50 - direct p50 = ${f0(added)} µs ` +
      `(target <= ${TARGET_ADDED_MEDIAN_US} µs: ${verdict(added <= TARGET_ADDED_MEDIAN_US)}); ` +
      `crm's own share of its median over the DB's: direct p50 - pgbench p50 = ${f0(directOne.value.p50us - pgGetOne.value.p50us)} µs`,
  );
  // The two phases above run one after the other, so a drift of the machine between them lands in their difference.
  // Alternating short windows of the same lead, direct and through the gateway in turns, measure it in the same
  // moments: the median of the windows' differences.
  const alternatingLead = await freshLead();
  readLeads.push({ label: 'GET 1c alternating', id: alternatingLead });
  const windowSpec = (target: 'direct' | 'gateway') =>
    getSpec(
      `${target === 'direct' ? stack.serviceUrls.crm : stack.gatewayUrl}/integrations/external/leads/${alternatingLead}`,
      target === 'direct' ? direct : keyAuth,
      { connections: 1, durationS: ONE_WINDOW, warmupS: 0.2 },
    );
  const differences: number[] = [];
  for (let round = 0; round < ONE_ROUNDS; round++) {
    const order: ('direct' | 'gateway')[] = round % 2 === 0 ? ['direct', 'gateway'] : ['gateway', 'direct'];
    const p50 = { direct: 0, gateway: 0 };
    for (const target of order) p50[target] = (await measure(windowSpec(target))).p50us;
    differences.push(p50.gateway - p50.direct);
  }
  const sortedDifferences = [...differences].sort((a, b) => a - b);
  const addedAlternating = sortedDifferences[Math.floor(sortedDifferences.length / 2)] ?? Number.NaN;
  say(
    `  same moments: ${ONE_ROUNDS} rounds of ${ONE_WINDOW} s windows, direct and gateway in turns: median of the rounds' gateway p50 - direct p50 = ` +
      `${f0(addedAlternating)} µs (${f0(sortedDifferences[0] ?? Number.NaN)}–${f0(sortedDifferences.at(-1) ?? Number.NaN)}) ` +
      `(target <= ${TARGET_ADDED_MEDIAN_US} µs: ${verdict(addedAlternating <= TARGET_ADDED_MEDIAN_US)})`,
  );
  say();

  let gatewayOwnAdded = Number.NaN;
  let gatewayRawRatio = Number.NaN;
  if (STAGES) {
    const stageMany = { connections: C, durationS: STAGE_DURATION, warmupS: 1 };
    say(
      `## 1c. Gateway stages: where the gateway's time goes (${C} connections for ${STAGE_DURATION} s after 1 s; one connection as in 1b)`,
    );
    say('  healthz = Express + metrics middleware only; auth+limit = key look-up (cached) + Redis rate limit, then the');
    say("  gateway's own 404 for an unknown resource (no upstream); gateway->raw = a second gateway process whose crm");
    say('  upstream is the raw node:http server: the whole gateway path (auth, limit, proxy hop) with a free upstream.');
    gatewayRaw = await startGatewayInFrontOf(stack, raw.url, path.join(outDir, 'logs'), PROFILE ? profEnv('gateway-raw') : {});
    bench.track('gateway-raw', gatewayRaw.pid);
    header();
    const stage = async (
      label: string,
      url: string,
      headers: Record<string, string>,
      status: number,
      shape: typeof many,
      cpuOf: string,
    ) => {
      const r = await phase(label, () => measure({ url, headers, expectStatus: status, ...shape }));
      line(label, r.value, r.cores, cpuOf);
      return r.value;
    };
    const none = '/integrations/external/bench-none';
    const viaRaw = `${gatewayRaw.url}/integrations/external/leads/${s.leadId}`;
    const hzMany = await stage(`gateway /healthz ${C}c`, `${stack.gatewayUrl}/healthz`, {}, 200, stageMany, 'gateway');
    const alMany = await stage(`gateway auth+limit, 404 ${C}c`, `${stack.gatewayUrl}${none}`, keyAuth, 404, stageMany, 'gateway');
    const grMany = await stage(`gateway->raw GET ${C}c`, viaRaw, keyAuth, 200, stageMany, 'gateway-raw');
    const hzOne = await stage('gateway /healthz 1c', `${stack.gatewayUrl}/healthz`, {}, 200, one, 'gateway');
    const alOne = await stage('gateway auth+limit, 404 1c', `${stack.gatewayUrl}${none}`, keyAuth, 404, one, 'gateway');
    const grOne = await stage('gateway->raw GET 1c', viaRaw, keyAuth, 200, one, 'gateway-raw');
    await gatewayRaw.stop();
    bench.untrack('gateway-raw');
    gatewayRaw = undefined;
    gatewayOwnAdded = grOne.p50us - rawOne.value.p50us;
    gatewayRawRatio = ratio(grMany.rate, rawMany.value.rate);
    say(
      `  one connection, each median over the previous: express ${f0(hzOne.p50us - rawOne.value.p50us)} µs over raw; ` +
        `auth+limit ${f0(alOne.p50us - hzOne.p50us)} µs over healthz; proxy hop ${f0(grOne.p50us - alOne.p50us)} µs over auth+limit`,
    );
    say(
      `  the gateway's own added median (gateway->raw p50 - raw p50): ${f0(gatewayOwnAdded)} µs (in front of crm: ${f0(added)} µs); ` +
        `gateway->raw/raw req/s at ${C}c: ${f3(gatewayRawRatio)}`,
    );
    say(
      `  ${C} connections, req/s: healthz ${f1(hzMany.rate)}, auth+limit ${f1(alMany.rate)}, gateway->raw ${f1(grMany.rate)}, gateway->crm ${f1(gwMany.value.rate)}`,
    );
    say();
  }

  // Evidence for views_count (decision 0012): every GET queued one view; the folder moved them to lead_views and
  // into leads.views_count. Counted + queued = history + queued = every view recorded.
  say('## 1d. Lead views recorded by the GET runs (each GET queues one view; the folder counts them into leads.views_count)');
  for (const { label, id } of readLeads) {
    const [c] = await adminQuery<{ counted: number; queued: number; history: number }>(
      `select l.views_count counted, (select count(*)::int from crm.lead_view_queue q where q.lead_id = l.id) queued,
              (select count(*)::int from crm.lead_views v where v.lead_id = l.id) history
       from crm.leads l where l.id = '${id}'`,
      database,
    );
    say(`  ${label.padEnd(20)} lead ${id}: views_count ${c?.counted}, still queued ${c?.queued}, in lead_views ${c?.history}`);
  }
  say();

  say(
    `## 2. POST /integrations/external/leads {"title"}: lead creation (${C} connections for ${DURATION} s after ${WARMUP} s; one connection as in 1b)`,
  );
  header();
  const postSpec = (shape: typeof many): LoadSpec => ({
    url: `${stack.gatewayUrl}/integrations/external/leads`,
    method: 'POST',
    headers: { ...keyAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Bench lead from autocannon' }),
    expectStatus: 201,
    ...shape,
  });
  const post = await sampledPhase(`POST gateway ${C}c`, () => measure(postSpec(many)));
  line('gateway POST lead (crm transaction + outbox)', post.value, post.cores, 'crm');
  const [pending] = await adminQuery<{ n: string }>('select count(*) as n from crm.outbox where published_at is null', database);
  const postOne = await phase('POST gateway 1c', () => measure(postSpec(one)));
  line('gateway POST lead, one connection', postOne.value, postOne.cores, 'crm');

  // The ceiling: the same statements by pgbench. The stack is stopped first so that crm's outbox relay
  // (its 1 s sweep) does not publish pgbench's rows and compete for the CPU.
  const [payloadRow] = await adminQuery<{ payload: string; lead: string }>(
    `select o.payload::text as payload, (select to_jsonb(l)::text from crm.leads l where l.id = (o.payload->'lead'->>'id')::uuid) as lead
     from crm.outbox o where o.event_key = 'lead.created' order by o.id desc limit 1`,
    database,
  );
  await raw.stop();
  bench.untrack('raw node:http');
  raw = undefined;
  await bench.stopStack();
  const createScript = leadCreationScript(leadSql, { ...ids, leadRow: payloadRow!.lead, payload: payloadRow!.payload });
  const pgb = await sampledPhase(`POST pgbench ${C}c`, () =>
    pgbench(pgbenchSpec(`lead-create-${C}c`, createScript, C, DURATION, WARMUP), onPgbench),
  );
  const pr: PgbenchResult = pgb.value;
  line('pgbench, the same transaction (ceiling)', { ...pr, unexpected: pr.failed }, pgb.cores, 'postgres');
  const pgbOne = await phase('POST pgbench 1c', () =>
    pgbench(pgbenchSpec('lead-create-1c', createScript, 1, ONE_DURATION, ONE_WARMUP), onPgbench),
  );
  line('pgbench, the same transaction, one client', { ...pgbOne.value, unexpected: pgbOne.value.failed }, pgbOne.cores, 'postgres');
  const createOfPg = ratio(post.value.rate, pr.rate);
  say(
    `  ratio: gateway POST / pgbench ${f3(createOfPg)} (target >= ${TARGET_CREATE_OF_PGBENCH}: ${verdict(createOfPg >= TARGET_CREATE_OF_PGBENCH)}); ` +
      `one connection: ${f3(ratio(postOne.value.rate, pgbOne.value.rate))}`,
  );
  say(`  per-second responses (gateway POST): ${trend(post.value)}`);
  say(`  outbox rows not yet published right after the POST run: ${pending?.n}`);
  say(`  during gateway POST: ${formatActivity(post.activity)}`);
  say(`  during pgbench:      ${formatActivity(pgb.activity)}`);
  say(`  pgbench command: ${pr.command}`);
  say(`  script: ${path.relative(REPO_ROOT, pr.scriptFile)} (GET reference: ${path.relative(REPO_ROOT, pgGetMany.value.scriptFile)})`);
  say(`  (the stack was stopped before pgbench ran; crm's pool is ${poolMax} connections, pgbench opens ${C})`);
  say();

  say('## summary');
  say(
    `  GET ${C}c   req/s: gateway ${f1(gwMany.value.rate)} | crm direct ${f1(directMany.value.rate)} | raw node:http ${f1(rawMany.value.rate)}`,
  );
  say(
    `            gateway/raw ${f3(gwOfRaw)} -> ${verdict(gwOfRaw >= TARGET_GATEWAY_OF_RAW)} (target >= ${TARGET_GATEWAY_OF_RAW}); direct/raw ${f3(ratio(directMany.value.rate, rawMany.value.rate))}`,
  );
  say(
    `  GET 1c    p50 µs: gateway ${f0(gwOne.value.p50us)} | crm direct ${f0(directOne.value.p50us)} | raw ${f0(rawOne.value.p50us)}; ` +
      `gateway adds ${f0(added)} µs -> ${verdict(added <= TARGET_ADDED_MEDIAN_US)} (target <= ${TARGET_ADDED_MEDIAN_US})`,
  );
  say(
    `            in alternating windows (same moments): adds ${f0(addedAlternating)} µs -> ${verdict(addedAlternating <= TARGET_ADDED_MEDIAN_US)}`,
  );
  if (STAGES)
    say(
      `            gateway in front of raw node:http: adds ${f0(gatewayOwnAdded)} µs at the median; ${f3(gatewayRawRatio)} of raw req/s at ${C}c`,
    );
  say(
    `  POST ${C}c  req/s: gateway ${f1(post.value.rate)} (p50 ${f0(post.value.p50us)} µs, p99 ${f0(post.value.p99us)} µs) | ` +
      `pgbench ${f1(pr.rate)} (p50 ${f0(pr.p50us)} µs, p99 ${f0(pr.p99us)} µs)`,
  );
  say(`            ratio ${f3(createOfPg)} -> ${verdict(createOfPg >= TARGET_CREATE_OF_PGBENCH)} (target >= ${TARGET_CREATE_OF_PGBENCH})`);
  bench.summarizeDisturbance();

  if (PROFILE) {
    say();
    say('## CPU profiles (node --cpu-prof), per phase');
    for (const proc of ['gateway', 'crm', 'gateway-raw']) {
      const dir = path.join(profDir, proc);
      const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')) : [];
      const relevant = (name: string) =>
        proc === 'gateway-raw'
          ? name.startsWith('gateway->raw')
          : proc === 'crm'
            ? /^(GET direct|GET gateway|POST gateway)/.test(name)
            : /^(GET gateway|POST gateway)|healthz|auth\+limit/.test(name);
      for (const file of files) {
        for (const p of phases.filter((x) => relevant(x.name))) {
          say(`### ${proc} during "${p.name}" (${path.relative(REPO_ROOT, path.join(dir, file))})`);
          say(formatSummary(summarize(path.join(dir, file), { fromUs: p.fromUs, toUs: p.toUs })));
        }
      }
    }
  }
}

await bench.execute(main, async () => {
  const notes: string[] = [];
  await gatewayRaw?.stop().catch((e: Error) => notes.push(`gateway-raw: ${e.message}`));
  await raw?.stop().catch((e: Error) => notes.push(`raw server: ${e.message}`));
  return notes;
});
