/**
 * The gateway and the lead path (`npm run bench`, and a part of `npm run bench:all`): throughput and latency, each
 * figure printed next to a ceiling measured in the same run on the same machine. Prints, never asserts; returns the
 * figures of issue 20. See bench/README.md.
 */
import path from 'node:path';
import { IDENTITY_HEADER } from '@svc/platform/identity';
import { REPO_ROOT } from '../scripts/stack.js';
import { phaseProfiles } from './lib/cpuprofile.js';
import { type ExtraGateway, startGatewayInFrontOf } from './lib/gateway-raw.js';
import { BenchRun, f0, f1, f3, ratio, say, trend, verdict } from './lib/harness.js';
import { adminQuery } from './lib/infra.js';
import { interleaved } from './lib/interleaved.js';
import { type LoadSpec, measure } from './lib/load.js';
import { formatActivity } from './lib/pgactivity.js';
import { leadCreationScript, leadReadScript, type PgbenchResult, pgbench } from './lib/pgbench.js';
import { type RawServer, startProxy, startRawServer } from './lib/raw.js';
import { BENCH_RATE_LIMIT, createLead, type Seeded, seed } from './lib/seed.js';
import { median } from './lib/stats.js';
import { type BenchFigures, meets, targetText } from './lib/targets.js';

export interface GatewaySettings {
  connections: number;
  durationS: number;
  warmupS: number;
  /** The one-connection runs. */
  oneDurationS: number;
  oneWarmupS: number;
  /** Rounds of one-connection requests taking turns (direct, gateway, bare forward), each round this long. */
  oneRounds: number;
  oneWindowS: number;
  /** The gateway stage breakdown (1c), its saturating runs this long. */
  stages: boolean;
  stageDurationS: number;
  /** CPU profiles of the gateways and crm (node --cpu-prof), summarised per phase. */
  profile: boolean;
  pgbenchThreads: number;
}

type Hop = 'direct' | 'gateway' | 'forward';

export type GatewayFigures = BenchFigures<'gateway_get_vs_direct' | 'gateway_added_vs_bare_forward' | 'lead_create_vs_pgbench'>;

/** Runs the bench on its own stack and database, removed afterwards. */
export async function benchGateway(settings: GatewaySettings): Promise<GatewayFigures> {
  const {
    connections: C,
    durationS: DURATION,
    warmupS: WARMUP,
    oneDurationS: ONE_DURATION,
    oneWarmupS: ONE_WARMUP,
    oneRounds: ONE_ROUNDS,
    oneWindowS: ONE_WINDOW,
    stages: STAGES,
    stageDurationS: STAGE_DURATION,
    profile: PROFILE,
    pgbenchThreads: PGBENCH_THREADS,
  } = settings;
  const bench = new BenchRun('bench');
  const { database, outDir, phases, phase, sampledPhase, header, line } = bench;
  const profDir = path.join(outDir, 'prof');
  const profEnv = (name: string) => ({ NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.join(profDir, name)}` });
  let raw: RawServer | undefined;
  let forward: RawServer | undefined;
  let gatewayRaw: ExtraGateway | undefined;

  const main = async (): Promise<GatewayFigures> => {
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
      return phase(label, () =>
        measure(getSpec(`${base}/integrations/external/leads/${id}`, target === 'direct' ? direct : keyAuth, shape)),
      );
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
    const gwOfDirect = ratio(gwMany.value.rate, directMany.value.rate);
    say(
      `  ratios: gateway/direct ${f3(gwOfDirect)} (target ${targetText('gateway_get_vs_direct')}: ${verdict(meets('gateway_get_vs_direct', gwOfDirect))}); ` +
        `gateway/raw ${f3(gwOfRaw)}; direct/raw ${f3(ratio(directMany.value.rate, rawMany.value.rate))}; ` +
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
      `  added by the gateway at the median: gateway p50 - direct p50 = ${f0(added)} µs; ` +
        `crm's own share of its median over the DB's: direct p50 - pgbench p50 = ${f0(directOne.value.p50us - pgGetOne.value.p50us)} µs`,
    );
    // The two phases above run one after the other, so a drift of the machine between them lands in their difference.
    // Requests to the same lead, direct, through the gateway and through a bare node:http forward in turns, measure
    // it in the same moments: per round, each hop's median over direct's. The forward is the floor of any proxy hop,
    // so the gateway's added median is judged against the forward's.
    const alternatingLead = await freshLead();
    readLeads.push({ label: 'GET 1c alternating', id: alternatingLead });
    forward = await startProxy('node-http', stack.serviceUrls.crm, direct[IDENTITY_HEADER]);
    bench.track('bare forward', forward.pid);
    const bases = { direct: stack.serviceUrls.crm, gateway: stack.gatewayUrl, forward: forward.url };
    // Requests take turns one by one (decision 0242), so each round's medians come from the same moments.
    const hopPath = `/integrations/external/leads/${alternatingLead}`;
    const SHUFFLED = process.env.BENCH_ONE_ORDER !== 'rotating';
    const alternating = await phase('GET 1c alternating', async () => {
      const rounds = await interleaved<Hop>(
        {
          direct: { url: `${bases.direct}${hopPath}`, headers: direct },
          gateway: { url: `${bases.gateway}${hopPath}`, headers: keyAuth },
          forward: { url: `${bases.forward}${hopPath}`, headers: {} },
        },
        ONE_ROUNDS,
        ONE_WINDOW,
        1,
        // Each turn's order is drawn anew (decision 0256), so the forward does not mostly follow the gateway;
        // BENCH_ONE_ORDER=rotating gives 0242's rotating order.
        SHUFFLED,
      );
      const added = { gateway: [] as number[], forward: [] as number[], ratio: [] as number[] };
      for (const p50 of rounds) {
        added.gateway.push(p50.gateway - p50.direct);
        added.forward.push(p50.forward - p50.direct);
        // A round where the forward added nothing measurable has no ratio; it is counted, not guessed.
        const r = ratio(p50.gateway - p50.direct, p50.forward - p50.direct);
        if (Number.isFinite(r)) added.ratio.push(r);
      }
      return added;
    });
    await forward.stop();
    bench.untrack('bare forward');
    forward = undefined;
    const addedAlternating = median(alternating.value.gateway);
    const forwardAdded = median(alternating.value.forward);
    // The figure is the median of the rounds' own ratios: a drift of the machine between rounds moves a round's two
    // differences together and cancels in its ratio, where a ratio of medians would take each from another round.
    const addedOfForward = median(alternating.value.ratio);
    const range = (v: number[]) => `${f0(Math.min(...v))}–${f0(Math.max(...v))}`;
    const range3 = (v: number[]) => `${f3(Math.min(...v))}–${f3(Math.max(...v))}`;
    say(
      `  same moments: ${ONE_ROUNDS} rounds of ${ONE_WINDOW} s, one request at a time to crm direct, the gateway and a bare node:http forward in turns${SHUFFLED ? ' (order drawn anew each turn)' : ''}; ` +
        `medians of the rounds' p50 over direct: gateway ${f0(addedAlternating)} µs (${range(alternating.value.gateway)}), ` +
        `forward ${f0(forwardAdded)} µs (${range(alternating.value.forward)}); their ratio ${f3(ratio(addedAlternating, forwardAdded))}`,
    );
    say(
      `  gateway's added p50 / the forward's, median of ${alternating.value.ratio.length} rounds' ratios (${range3(alternating.value.ratio)}): ${f3(addedOfForward)} (target ${targetText('gateway_added_vs_bare_forward')}: ` +
        `${verdict(meets('gateway_added_vs_bare_forward', addedOfForward))})${bench.disturbed.includes('GET 1c alternating') ? '   DISTURBED' : ''}`,
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
      `  ratio: gateway POST / pgbench ${f3(createOfPg)} (target ${targetText('lead_create_vs_pgbench')}: ${verdict(meets('lead_create_vs_pgbench', createOfPg))}); ` +
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
      `            gateway/direct ${f3(gwOfDirect)} -> ${verdict(meets('gateway_get_vs_direct', gwOfDirect))} (target ${targetText('gateway_get_vs_direct')}); ` +
        `gateway/raw ${f3(gwOfRaw)}; direct/raw ${f3(ratio(directMany.value.rate, rawMany.value.rate))}`,
    );
    say(
      `  GET 1c    p50 µs: gateway ${f0(gwOne.value.p50us)} | crm direct ${f0(directOne.value.p50us)} | raw ${f0(rawOne.value.p50us)}; gateway adds ${f0(added)} µs`,
    );
    say(
      `            in alternating windows (same moments): gateway adds ${f0(addedAlternating)} µs, a bare forward ${f0(forwardAdded)} µs: ` +
        `${f3(addedOfForward)} -> ${verdict(meets('gateway_added_vs_bare_forward', addedOfForward))} (target ${targetText('gateway_added_vs_bare_forward')})`,
    );
    if (STAGES)
      say(
        `            gateway in front of raw node:http: adds ${f0(gatewayOwnAdded)} µs at the median; ${f3(gatewayRawRatio)} of raw req/s at ${C}c`,
      );
    say(
      `  POST ${C}c  req/s: gateway ${f1(post.value.rate)} (p50 ${f0(post.value.p50us)} µs, p99 ${f0(post.value.p99us)} µs) | ` +
        `pgbench ${f1(pr.rate)} (p50 ${f0(pr.p50us)} µs, p99 ${f0(pr.p99us)} µs)`,
    );
    say(
      `            ratio ${f3(createOfPg)} -> ${verdict(meets('lead_create_vs_pgbench', createOfPg))} (target ${targetText('lead_create_vs_pgbench')})`,
    );
    bench.summarizeDisturbance();
    if (PROFILE) {
      say();
      say('## CPU profiles (node --cpu-prof), per phase');
      for (const l of phaseProfiles(profDir, phases, {
        gateway: (name) => /^(GET gateway|POST gateway)|healthz|auth\+limit/.test(name),
        crm: (name) => /^(GET direct|GET gateway|POST gateway)/.test(name),
        'gateway-raw': (name) => name.startsWith('gateway->raw'),
      }))
        say(l);
    }
    return {
      figures: {
        gateway_get_vs_direct: { value: gwOfDirect, phases: [`GET direct ${C}c`, `GET gateway ${C}c`] },
        gateway_added_vs_bare_forward: { value: addedOfForward, phases: ['GET 1c alternating'] },
        lead_create_vs_pgbench: { value: createOfPg, phases: [`POST gateway ${C}c`, `POST pgbench ${C}c`] },
      },
      disturbed: [...bench.disturbed],
    };
  };

  return bench.run(main, async () => {
    const notes: string[] = [];
    await gatewayRaw?.stop().catch((e: Error) => notes.push(`gateway-raw: ${e.message}`));
    await forward?.stop().catch((e: Error) => notes.push(`bare forward: ${e.message}`));
    await raw?.stop().catch((e: Error) => notes.push(`raw server: ${e.message}`));
    return notes;
  });
}
