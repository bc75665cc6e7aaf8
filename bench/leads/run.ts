/**
 * `npm run bench:leads`: the richer lead paths of issue 3, each next to a ceiling measured in the same run. Prints,
 * never asserts. See bench/README.md ("npm run bench:leads").
 *
 * (a) POST /leads with a person (deduplicated: found and reused; and new: the search misses and a person is
 *     created), two custom fields (one required) and a marketing url_conversion with utm parameters and the
 *     consent, through the gateway, against pgbench replaying the statements crm sends for the same creation
 *     (captured from crm's own Leads.create run in this process: lib/capture.ts).
 * (b) GET of a richly populated lead (tags, three persons, organization, custom fields, followers, notes, an
 *     acquisition) through the gateway, crm direct and raw node:http serving the same body; pgbench of crm's GET
 *     statement on such a lead.
 *
 * Knobs (environment): BENCH_CONNECTIONS (32), BENCH_DURATION (10 s), BENCH_WARMUP (2 s), BENCH_ONE_DURATION (5 s),
 * BENCH_ONE_WARMUP (1 s), BENCH_PGBENCH_THREADS (1), BENCH_LEADS_PARTS (`a,b`: run only some).
 */
import path from 'node:path';
import { createLeadBody, crmPlan, dbDefinition, Leads } from '@svc/crm';
import { createOrm } from '@svc/platform/db/orm';
import { OutboxWriter } from '@svc/platform/events/writer';
import { createLogger } from '@svc/platform/logging';
import type { ServiceContext } from '@svc/platform/service';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { REPO_ROOT } from '../../scripts/stack.js';
import { capture, pgbenchScript, type ReplayScript } from '../lib/capture.js';
import { BenchRun, f0, f1, f3, num, ratio, say, trend } from '../lib/harness.js';
import { adminQuery, databaseUrl, runBench } from '../lib/infra.js';
import { type LoadResult, type LoadSpec, measure } from '../lib/load.js';
import { formatActivity } from '../lib/pgactivity.js';
import { leadReadScript, pgbench } from '../lib/pgbench.js';
import { type RawServer, startRawServer } from '../lib/raw.js';
import { seed } from '../lib/seed.js';
import { createRichLead, creationBody, DEDUP_EMAIL, type LeadReferences, newEmail, seedLeadReferences } from './bodies.js';

const C = num('BENCH_CONNECTIONS', 32);
const DURATION = num('BENCH_DURATION', 10);
const WARMUP = num('BENCH_WARMUP', 2);
const ONE_DURATION = num('BENCH_ONE_DURATION', 5);
const ONE_WARMUP = num('BENCH_ONE_WARMUP', 1);
const PGBENCH_THREADS = num('BENCH_PGBENCH_THREADS', 1);
const PARTS = new Set((process.env.BENCH_LEADS_PARTS ?? 'a,b').split(',').map((p) => p.trim()));

const bench = new BenchRun('bench-leads');
const { phase, sampledPhase, header, line } = bench;
let raw: RawServer | undefined;

const many = { connections: C, durationS: DURATION, warmupS: WARMUP };
const one = { connections: 1, durationS: ONE_DURATION, warmupS: ONE_WARMUP };
type Shape = typeof many;

async function main(): Promise<void> {
  await bench.preamble(
    'svc bench: leads (issue 3: creation with a person, custom fields and marketing; GET of a rich lead)',
    `parts ${[...PARTS].join(',')}; ${C} connections for ${DURATION} s after a ${WARMUP} s warm-up; one connection for ${ONE_DURATION} s after ${ONE_WARMUP} s`,
  );
  const stack = await bench.launch();
  const s = await seed(stack.gatewayUrl, bench.adminToken);
  const refs = await seedLeadReferences(stack.gatewayUrl, bench.adminToken, s);
  say(`seeded company ${s.companyId}: 4 lead custom fields (Segment required), 3 tags, 2 persons, an organization, 2 followers`);
  const keyAuth = { authorization: `Bearer ${s.key}` };
  const direct = await bench.directHeaders(s);
  say();

  if (PARTS.has('b')) await richRead(stack.gatewayUrl, stack.serviceUrls.crm, s.key, keyAuth, direct, refs, s);
  if (PARTS.has('a')) await creation(stack.gatewayUrl, keyAuth, refs, s);

  say('## summary');
  bench.summarizeDisturbance();
}

/** (b) GET /leads/{id} of a rich lead: raw, crm direct, gateway, pgbench; at C connections and at one. */
async function richRead(
  gatewayUrl: string,
  crmUrl: string,
  key: string,
  keyAuth: Record<string, string>,
  direct: Record<string, string>,
  refs: LeadReferences,
  s: { companyId: string; userId: string },
) {
  // Every GET records a view; each phase reads its own fresh lead, as in npm run bench.
  const freshLead = () => createRichLead(gatewayUrl, key, refs, bench.database);
  const sample = await freshLead();
  const first = await fetch(`${gatewayUrl}/integrations/external/leads/${sample}`, { headers: keyAuth });
  const body = await first.text();
  if (first.status !== 200) throw new Error(`GET rich lead: ${first.status} ${body.slice(0, 300)}`);
  const detail = JSON.parse(body) as Record<string, unknown[] | unknown>;
  const count = (k: string) => (Array.isArray(detail[k]) ? (detail[k] as unknown[]).length : 0);
  raw = await startRawServer(body);
  bench.track('raw node:http', raw.pid);
  const leadSql = await bench.leadSql();
  say(
    `## (b) GET /integrations/external/leads/{id} of a rich lead (${body.length}-byte detail: ${count('tags')} tags, ` +
      `${count('participants')} persons, organization, ${count('custom_fields')} custom fields, ${count('followers')} followers, ` +
      `${(detail.associations_count as { notes: number }).notes} notes, an acquisition)`,
  );
  const get = (url: string, headers: Record<string, string>, shape: Shape): LoadSpec => ({ url, headers, expectStatus: 200, ...shape });
  await measure(get(`${gatewayUrl}/integrations/external/leads/${sample}`, keyAuth, { ...many, durationS: WARMUP, warmupS: 0 }));
  await measure(get(`${crmUrl}/integrations/external/leads/${sample}`, direct, { ...many, durationS: WARMUP, warmupS: 0 }));
  const run = async (label: string, shape: Shape, target: 'raw' | 'direct' | 'gateway' | 'pgbench') => {
    if (target === 'raw') return phase(label, () => measure(get(raw!.url, {}, shape)));
    const id = await freshLead();
    if (target === 'pgbench') {
      const script = leadReadScript(leadSql, { ...s, leadId: id });
      const name = `rich-read-${shape.connections}c`;
      return phase(label, () =>
        pgbench(bench.pgbenchSpec(name, script, shape.connections, shape.durationS, shape.warmupS, PGBENCH_THREADS), bench.onPgbench),
      );
    }
    const base = target === 'direct' ? crmUrl : gatewayUrl;
    return phase(label, () => measure(get(`${base}/integrations/external/leads/${id}`, target === 'direct' ? direct : keyAuth, shape)));
  };
  const results: Record<string, Awaited<ReturnType<typeof run>>> = {};
  let gatewayMany: LoadResult | undefined;
  for (const [shape, suffix] of [
    [many, `${C}c`],
    [one, '1c'],
  ] as const) {
    say(`### ${shape.connections} connection(s), ${shape.durationS} s after ${shape.warmupS} s`);
    header();
    for (const [target, label, cpuOf] of [
      ['raw', 'raw node:http, the same body (ceiling)', 'raw node:http'],
      ['direct', 'crm direct (x-svc-identity token)', 'crm'],
      ['gateway', 'gateway (key auth + rate limit + proxy)', 'gateway'],
      ['pgbench', "pgbench, crm's GET statement on a rich lead", 'postgres'],
    ] as const) {
      const r = await run(`rich GET ${target} ${suffix}`, shape, target);
      line(label, r.value, r.cores, cpuOf);
      results[`${target} ${suffix}`] = r;
      if (target === 'gateway' && shape === many && 'perSecond' in r.value) gatewayMany = r.value;
    }
  }
  await raw.stop();
  bench.untrack('raw node:http');
  raw = undefined;
  const rate = (k: string) => results[k]!.value.rate;
  const p50 = (k: string) => results[k]!.value.p50us;
  say(
    `  ratios at ${C}c: gateway/raw ${f3(ratio(rate(`gateway ${C}c`), rate(`raw ${C}c`)))}; direct/raw ${f3(ratio(rate(`direct ${C}c`), rate(`raw ${C}c`)))}; ` +
      `gateway/direct ${f3(ratio(rate(`gateway ${C}c`), rate(`direct ${C}c`)))}; gateway/pgbench ${f3(ratio(rate(`gateway ${C}c`), rate(`pgbench ${C}c`)))}; ` +
      `pgbench/raw ${f3(ratio(rate(`pgbench ${C}c`), rate(`raw ${C}c`)))}`,
  );
  say(
    `  one connection: gateway p50 - direct p50 = ${f0(p50('gateway 1c') - p50('direct 1c'))} µs (added by the gateway); ` +
      `direct p50 - pgbench p50 = ${f0(p50('direct 1c') - p50('pgbench 1c'))} µs (crm's own share)`,
  );
  if (gatewayMany) say(`  per-second responses: gateway ${trend(gatewayMany)}`);
  say();
}

/** (a) POST /leads with a person, custom fields and marketing: the gateway, then pgbench replaying crm's statements. */
async function creation(
  gatewayUrl: string,
  keyAuth: Record<string, string>,
  refs: LeadReferences,
  s: { companyId: string; userId: string },
) {
  say(`## (a) POST /integrations/external/leads with a person, 2 custom fields (1 required) and marketing url_conversion`);
  say('  dedup: the person (avoid_duplicate by e-mail) is found and reused; new: a new e-mail every request, so the');
  say('  search misses and a person with two contacts is created. Each creation also resolves the origin from utm_source');
  say('  (lead source "google", found by name) and writes an acquisition, the person as participant and 2 answers.');
  header();
  const post = (body: () => string, shape: Shape): LoadSpec => ({
    url: `${gatewayUrl}/integrations/external/leads`,
    method: 'POST',
    headers: { ...keyAuth, 'content-type': 'application/json' },
    bodyOf: body,
    expectStatus: 201,
    ...shape,
  });
  const dedupBody = JSON.stringify(creationBody(refs, DEDUP_EMAIL));
  // Statistics as autovacuum would have them: each phase starts after ANALYZE (the person search's plan depends on
  // them; the EXPLAINs below show the plan with the statistics the runs left).
  const analyze = () => adminQuery('analyze', bench.database);
  await analyze();
  const dedup = await sampledPhase(`POST dedup gateway ${C}c`, () => measure(post(() => dedupBody, many)));
  line('gateway POST, person deduplicated', dedup.value, dedup.cores, 'crm');
  const dedupOne = await phase('POST dedup gateway 1c', () => measure(post(() => dedupBody, one)));
  line('gateway POST, person deduplicated, one connection', dedupOne.value, dedupOne.cores, 'crm');
  const counts = async () =>
    (
      await adminQuery<{ persons: number; leads: number; dedup: number }>(
        `select (select count(*)::int from crm.persons) persons, (select count(*)::int from crm.leads) leads,
           (select count(distinct person_id)::int from crm.person_contacts where value = '${DEDUP_EMAIL}') dedup`,
        bench.database,
      )
    )[0]!;
  const before = await counts();
  await analyze();
  const fresh = await sampledPhase(`POST new gateway ${C}c`, () =>
    measure(post(() => JSON.stringify(creationBody(refs, newEmail())), many)),
  );
  line('gateway POST, new person', fresh.value, fresh.cores, 'crm');
  const after = await counts();
  say(
    `  check: persons holding the deduplicated e-mail: ${after.dedup} (expected 1); the new-person run (warm-up included) ` +
      `created ${after.leads - before.leads} leads and ${after.persons - before.persons} persons (expected equal)`,
  );

  // The statements crm sends: crm's Leads.create in this process on the bench database (after a creation of the same
  // body, so the lead source exists as it does in the measured runs).
  const dedupReplay = await captureCreation(s, creationBody(refs, DEDUP_EMAIL), () => creationBody(refs, DEDUP_EMAIL));
  const newReplay = await captureCreation(s, creationBody(refs, newEmail()), () => creationBody(refs, newEmail(uuidv7())));
  for (const [label, r] of [
    ['dedup', dedupReplay],
    ['new', newReplay],
  ] as const) {
    say(`  statements of one creation (${label}), replayed by pgbench with ${r.freshIds} new ids per transaction:`);
    for (const [i, st] of r.outline.entries()) say(`    ${String(i + 1).padStart(2)}. ${st}`);
  }

  // The stack is stopped first, so that crm's outbox relay does not publish pgbench's rows.
  await bench.stopStack();
  const replay = async (label: string, r: ReplayScript, shape: Shape) => {
    const name = `lead-create-${label}-${shape.connections}c`;
    const spec = {
      ...bench.pgbenchSpec(name, r.script, shape.connections, shape.durationS, shape.warmupS, PGBENCH_THREADS),
      perStatement: true,
    };
    await analyze();
    return sampledPhase(`POST ${label} pgbench ${shape.connections}c`, () => pgbench(spec, bench.onPgbench));
  };
  const pgDedup = await replay('dedup', dedupReplay, many);
  line('pgbench, the dedup creation (ceiling)', { ...pgDedup.value, unexpected: pgDedup.value.failed }, pgDedup.cores, 'postgres');
  const pgDedupOne = await replay('dedup', dedupReplay, one);
  line(
    'pgbench, the dedup creation, one client',
    { ...pgDedupOne.value, unexpected: pgDedupOne.value.failed },
    pgDedupOne.cores,
    'postgres',
  );
  const pgNew = await replay('new', newReplay, many);
  line('pgbench, the new-person creation (ceiling)', { ...pgNew.value, unexpected: pgNew.value.failed }, pgNew.cores, 'postgres');
  say(
    `  ratios gateway POST / pgbench: dedup ${f3(ratio(dedup.value.rate, pgDedup.value.rate))} at ${C}c, ` +
      `${f3(ratio(dedupOne.value.rate, pgDedupOne.value.rate))} at one connection; new person ${f3(ratio(fresh.value.rate, pgNew.value.rate))} at ${C}c`,
  );
  for (const [label, r] of [
    [`dedup ${C}c`, pgDedup.value],
    ['dedup 1c', pgDedupOne.value],
    [`new ${C}c`, pgNew.value],
  ] as const) {
    const top = [...r.statements].sort((x, y) => y.ms - x.ms).slice(0, 4);
    say(`  pgbench ${label}, slowest statements (mean ms): ${top.map((t) => `${t.ms.toFixed(2)} ${t.sql.slice(0, 70)}`).join(' | ')}`);
  }
  await explainDedupSearch(newReplay, 'with the statistics the runs left');
  await analyze();
  await explainDedupSearch(newReplay, 'after ANALYZE');
  say(`  per-second responses: dedup ${trend(dedup.value)}`);
  say(`                        new   ${trend(fresh.value)}`);
  say(`  during gateway POST dedup: ${formatActivity(dedup.activity)}`);
  say(`  during pgbench dedup:      ${formatActivity(pgDedup.activity)}`);
  say(`  during gateway POST new:   ${formatActivity(fresh.activity)}`);
  say(`  during pgbench new:        ${formatActivity(pgNew.activity)}`);
  say(`  scripts: ${path.relative(REPO_ROOT, pgDedup.value.scriptFile)}, ${path.relative(REPO_ROOT, pgNew.value.scriptFile)}`);
  say(`  pgbench command: ${pgDedup.value.command}`);
  say(
    `  p50/p99 µs: gateway dedup ${f0(dedup.value.p50us)}/${f0(dedup.value.p99us)}, new ${f0(fresh.value.p50us)}/${f0(fresh.value.p99us)}; ` +
      `pgbench dedup ${f0(pgDedup.value.p50us)}/${f0(pgDedup.value.p99us)}, new ${f0(pgNew.value.p50us)}/${f0(pgNew.value.p99us)}; req/s ${f1(dedup.value.rate)} / ${f1(fresh.value.rate)}`,
  );
  say();
}

/**
 * EXPLAIN ANALYZE of the person search of a creation (`crm_person_find_by_contacts`, with an e-mail nobody holds),
 * once the runs have filled the company with persons, and how many contacts it has.
 */
async function explainDedupSearch(replay: ReplayScript, when: string) {
  const i = replay.outline.indexOf('crm_person_find_by_contacts');
  if (i < 0) return;
  const sql = replay.lines[i]!.replace(/:fresh_\d+/g, "'00000000-0000-7000-8000-000000000000'");
  const client = new pg.Client({ connectionString: databaseUrl(bench.database), options: '-c search_path=crm' });
  await client.connect();
  try {
    const { rows: counts } = await client.query<{ persons: number; contacts: number }>(
      'select (select count(*)::int from persons) persons, (select count(*)::int from person_contacts) contacts',
    );
    say(`  the person search after the runs, ${when} (${counts[0]?.persons} persons, ${counts[0]?.contacts} contacts in the company):`);
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${sql}`);
    for (const r of rows) say(`    ${r['QUERY PLAN']}`);
  } finally {
    await client.end();
  }
}

/**
 * crm's Leads.create run in this process on the bench database: `warm` once (its connections opened, the lead source
 * found), then `measured` captured. Ids made during the captured call (UUIDv7 at or after its start) become new
 * ids in every replayed transaction; `measured` puts one in the new person's e-mail, so that e-mail is new too.
 */
async function captureCreation(
  s: { companyId: string; userId: string },
  warm: Record<string, unknown>,
  measured: () => Record<string, unknown>,
): Promise<ReplayScript> {
  const orm = await createOrm({
    url: databaseUrl(bench.database),
    schema: 'crm',
    entities: dbDefinition.entities,
    migrations: [],
    poolMax: 2,
  });
  try {
    // No relay in this process: the creation's outbox row stays unpublished (the stack is stopped by then anyway).
    const ctx: Pick<ServiceContext, 'name' | 'schema' | 'orm' | 'logger' | 'outbox'> = {
      name: 'crm',
      schema: 'crm',
      orm,
      logger: createLogger('crm', 'warn'),
      outbox: new OutboxWriter('crm', crmPlan),
    };
    const leads = new Leads(ctx as ServiceContext);
    const actor = { companyId: s.companyId, userId: s.userId };
    await leads.create(actor, createLeadBody.parse(warm));
    // Before the body is made: ids the body carries (a new person's e-mail) count as the call's, renewed per transaction.
    const since = Date.now();
    const body = createLeadBody.parse(measured());
    const statements = await capture(() => leads.create(actor, body));
    return pgbenchScript(statements, since);
  } finally {
    await orm.close(true);
  }
}

await runBench(() =>
  bench.run(main, async () => {
    const notes: string[] = [];
    await raw?.stop().catch((e: Error) => notes.push(`raw server: ${e.message}`));
    return notes;
  }),
);
