/**
 * The richer lead paths of issue 3 (`npm run bench:leads`, and a part of `npm run bench:all`), each next to a ceiling
 * measured in the same run. Prints, never asserts. See bench/README.md ("npm run bench:leads").
 *
 * (a) POST /leads with a person (deduplicated: found and reused; and new: the search misses and a person is
 *     created), two custom fields (one required) and a marketing url_conversion with utm parameters and the
 *     consent, through the gateway, against pgbench replaying the statements crm sends for the same creation
 *     (captured from crm's own Leads.create run in this process: lib/capture.ts).
 * (b) GET of a richly populated lead (tags, three persons, organization, custom fields, followers, notes, an
 *     acquisition) through the gateway, crm direct and raw node:http serving the same body; pgbench of crm's GET
 *     statement on such a lead.
 */
import path from 'node:path';
import { createLeadBody, crmPlan, dbDefinition, Leads, marketingOrigins, poolOf } from '@svc/crm';
import { createOrm } from '@svc/platform/db/orm';
import { OutboxWriter } from '@svc/platform/events/writer';
import { createLogger } from '@svc/platform/logging';
import type { ServiceContext } from '@svc/platform/service';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { REPO_ROOT } from '../../scripts/stack.js';
import { capture, pgbenchScript, type ReplayScript } from '../lib/capture.js';
import { BenchRun, f0, f1, f3, ratio, say, trend } from '../lib/harness.js';
import { adminQuery, databaseUrl } from '../lib/infra.js';
import { type LoadResult, type LoadSpec, measure } from '../lib/load.js';
import { formatActivity } from '../lib/pgactivity.js';
import { leadReadScript, pgbench } from '../lib/pgbench.js';
import { type RawServer, startRawServer } from '../lib/raw.js';
import { seed } from '../lib/seed.js';
import type { BenchFigures } from '../lib/targets.js';
import { createRichLead, creationBody, DEDUP_EMAIL, type LeadReferences, newEmail, seedLeadReferences } from './bodies.js';

export interface LeadsSettings {
  connections: number;
  durationS: number;
  warmupS: number;
  oneDurationS: number;
  oneWarmupS: number;
  pgbenchThreads: number;
  /** `a` (creation), `b` (rich GET): the parts to run. */
  parts: Set<string>;
}

/** No row of issue 20's table comes from here; bench:all takes its disturbed phases. */
export type LeadsFigures = BenchFigures<never>;

type Shape = { connections: number; durationS: number; warmupS: number };

/** Runs the bench on its own stack and database, removed afterwards. */
export function benchLeads(settings: LeadsSettings): Promise<LeadsFigures> {
  const run = new LeadsRun(settings);
  return run.bench.run(
    () => run.main(),
    async () => {
      const notes: string[] = [];
      await run.raw?.stop().catch((e: Error) => notes.push(`raw server: ${e.message}`));
      return notes;
    },
  );
}

class LeadsRun {
  readonly bench = new BenchRun('bench-leads');
  raw: RawServer | undefined;
  private readonly many: Shape;
  private readonly one: Shape;

  constructor(private readonly s: LeadsSettings) {
    this.many = { connections: s.connections, durationS: s.durationS, warmupS: s.warmupS };
    this.one = { connections: 1, durationS: s.oneDurationS, warmupS: s.oneWarmupS };
  }

  async main(): Promise<LeadsFigures> {
    await this.bench.preamble(
      'svc bench: leads (issue 3: creation with a person, custom fields and marketing; GET of a rich lead)',
      `parts ${[...this.s.parts].join(',')}; ${this.s.connections} connections for ${this.s.durationS} s after a ${this.s.warmupS} s warm-up; one connection for ${this.s.oneDurationS} s after ${this.s.oneWarmupS} s`,
    );
    const stack = await this.bench.launch();
    const s = await seed(stack.gatewayUrl, this.bench.adminToken);
    const refs = await seedLeadReferences(stack.gatewayUrl, this.bench.adminToken, s);
    say(`seeded company ${s.companyId}: 4 lead custom fields (Segment required), 3 tags, 2 persons, an organization, 2 followers`);
    const keyAuth = { authorization: `Bearer ${s.key}` };
    const direct = await this.bench.directHeaders(s);
    say();

    if (this.s.parts.has('b')) await this.richRead(stack.gatewayUrl, stack.serviceUrls.crm, s.key, keyAuth, direct, refs, s);
    if (this.s.parts.has('a')) await this.creation(stack.gatewayUrl, keyAuth, refs, s);

    say('## summary');
    this.bench.summarizeDisturbance();
    return { figures: {}, disturbed: [...this.bench.disturbed] };
  }

  /** (b) GET /leads/{id} of a rich lead: raw, crm direct, gateway, pgbench; at C connections and at one. */
  private async richRead(
    gatewayUrl: string,
    crmUrl: string,
    key: string,
    keyAuth: Record<string, string>,
    direct: Record<string, string>,
    refs: LeadReferences,
    s: { companyId: string; userId: string },
  ) {
    const { many, one } = this;
    // Every GET records a view; each phase reads its own fresh lead, as in npm run this.bench.
    const freshLead = () => createRichLead(gatewayUrl, key, refs, this.bench.database);
    const sample = await freshLead();
    const first = await fetch(`${gatewayUrl}/integrations/external/leads/${sample}`, { headers: keyAuth });
    const body = await first.text();
    if (first.status !== 200) throw new Error(`GET rich lead: ${first.status} ${body.slice(0, 300)}`);
    const detail = JSON.parse(body) as Record<string, unknown[] | unknown>;
    const count = (k: string) => (Array.isArray(detail[k]) ? (detail[k] as unknown[]).length : 0);
    this.raw = await startRawServer(body);
    this.bench.track('raw node:http', this.raw.pid);
    const leadSql = await this.bench.leadSql();
    say(
      `## (b) GET /integrations/external/leads/{id} of a rich lead (${body.length}-byte detail: ${count('tags')} tags, ` +
        `${count('participants')} persons, organization, ${count('custom_fields')} custom fields, ${count('followers')} followers, ` +
        `${(detail.associations_count as { notes: number }).notes} notes, an acquisition)`,
    );
    const get = (url: string, headers: Record<string, string>, shape: Shape): LoadSpec => ({ url, headers, expectStatus: 200, ...shape });
    await measure(get(`${gatewayUrl}/integrations/external/leads/${sample}`, keyAuth, { ...many, durationS: this.s.warmupS, warmupS: 0 }));
    await measure(get(`${crmUrl}/integrations/external/leads/${sample}`, direct, { ...many, durationS: this.s.warmupS, warmupS: 0 }));
    const run = async (label: string, shape: Shape, target: 'raw' | 'direct' | 'gateway' | 'pgbench') => {
      if (target === 'raw') return this.bench.phase(label, () => measure(get(this.raw!.url, {}, shape)));
      const id = await freshLead();
      if (target === 'pgbench') {
        const script = leadReadScript(leadSql, { ...s, leadId: id });
        const name = `rich-read-${shape.connections}c`;
        return this.bench.phase(label, () =>
          pgbench(
            this.bench.pgbenchSpec(name, script, shape.connections, shape.durationS, shape.warmupS, this.s.pgbenchThreads),
            this.bench.onPgbench,
          ),
        );
      }
      const base = target === 'direct' ? crmUrl : gatewayUrl;
      return this.bench.phase(label, () =>
        measure(get(`${base}/integrations/external/leads/${id}`, target === 'direct' ? direct : keyAuth, shape)),
      );
    };
    const results: Record<string, Awaited<ReturnType<typeof run>>> = {};
    let gatewayMany: LoadResult | undefined;
    for (const [shape, suffix] of [
      [many, `${this.s.connections}c`],
      [one, '1c'],
    ] as const) {
      say(`### ${shape.connections} connection(s), ${shape.durationS} s after ${shape.warmupS} s`);
      this.bench.header();
      for (const [target, label, cpuOf] of [
        ['raw', 'raw node:http, the same body (ceiling)', 'raw node:http'],
        ['direct', 'crm direct (x-svc-identity token)', 'crm'],
        ['gateway', 'gateway (key auth + rate limit + proxy)', 'gateway'],
        ['pgbench', "pgbench, crm's GET statement on a rich lead", 'postgres'],
      ] as const) {
        const r = await run(`rich GET ${target} ${suffix}`, shape, target);
        this.bench.line(label, r.value, r.cores, cpuOf);
        results[`${target} ${suffix}`] = r;
        if (target === 'gateway' && shape === many && 'perSecond' in r.value) gatewayMany = r.value;
      }
    }
    await this.raw.stop();
    this.bench.untrack('raw node:http');
    this.raw = undefined;
    const rate = (k: string) => results[k]!.value.rate;
    const p50 = (k: string) => results[k]!.value.p50us;
    say(
      `  ratios at ${this.s.connections}c: gateway/raw ${f3(ratio(rate(`gateway ${this.s.connections}c`), rate(`raw ${this.s.connections}c`)))}; direct/raw ${f3(ratio(rate(`direct ${this.s.connections}c`), rate(`raw ${this.s.connections}c`)))}; ` +
        `gateway/direct ${f3(ratio(rate(`gateway ${this.s.connections}c`), rate(`direct ${this.s.connections}c`)))}; gateway/pgbench ${f3(ratio(rate(`gateway ${this.s.connections}c`), rate(`pgbench ${this.s.connections}c`)))}; ` +
        `pgbench/raw ${f3(ratio(rate(`pgbench ${this.s.connections}c`), rate(`raw ${this.s.connections}c`)))}`,
    );
    say(
      `  one connection: gateway p50 - direct p50 = ${f0(p50('gateway 1c') - p50('direct 1c'))} µs (added by the gateway); ` +
        `direct p50 - pgbench p50 = ${f0(p50('direct 1c') - p50('pgbench 1c'))} µs (crm's own share)`,
    );
    if (gatewayMany) say(`  per-second responses: gateway ${trend(gatewayMany)}`);
    say();
  }

  /** (a) POST /leads with a person, custom fields and marketing: the gateway, then pgbench replaying crm's statements. */
  private async creation(
    gatewayUrl: string,
    keyAuth: Record<string, string>,
    refs: LeadReferences,
    s: { companyId: string; userId: string },
  ) {
    const { many, one } = this;
    say(`## (a) POST /integrations/external/leads with a person, 2 custom fields (1 required) and marketing url_conversion`);
    say('  dedup: the person (avoid_duplicate by e-mail) is found and reused; new: a new e-mail every request, so the');
    say('  search misses and a person with two contacts is created. Each creation also resolves the origin from utm_source');
    say('  (lead source "google", found by name) and writes an acquisition, the person as participant and 2 answers.');
    this.bench.header();
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
    const analyze = () => adminQuery('analyze', this.bench.database);
    await analyze();
    const dedup = await this.bench.sampledPhase(`POST dedup gateway ${this.s.connections}c`, () => measure(post(() => dedupBody, many)));
    this.bench.line('gateway POST, person deduplicated', dedup.value, dedup.cores, 'crm');
    const dedupOne = await this.bench.phase('POST dedup gateway 1c', () => measure(post(() => dedupBody, one)));
    this.bench.line('gateway POST, person deduplicated, one connection', dedupOne.value, dedupOne.cores, 'crm');
    const counts = async () =>
      (
        await adminQuery<{ persons: number; leads: number; dedup: number }>(
          `select (select count(*)::int from crm.persons) persons, (select count(*)::int from crm.leads) leads,
             (select count(distinct person_id)::int from crm.person_contacts where value = '${DEDUP_EMAIL}') dedup`,
          this.bench.database,
        )
      )[0]!;
    const before = await counts();
    await analyze();
    const fresh = await this.bench.sampledPhase(`POST new gateway ${this.s.connections}c`, () =>
      measure(post(() => JSON.stringify(creationBody(refs, newEmail())), many)),
    );
    this.bench.line('gateway POST, new person', fresh.value, fresh.cores, 'crm');
    const after = await counts();
    say(
      `  check: persons holding the deduplicated e-mail: ${after.dedup} (expected 1); the new-person run (warm-up included) ` +
        `created ${after.leads - before.leads} leads and ${after.persons - before.persons} persons (expected equal)`,
    );

    // The statements crm sends: crm's Leads.create in this process on the bench database (after a creation of the same
    // body, so the lead source exists as it does in the measured runs).
    const dedupReplay = await this.captureCreation(s, creationBody(refs, DEDUP_EMAIL), () => creationBody(refs, DEDUP_EMAIL));
    const newReplay = await this.captureCreation(s, creationBody(refs, newEmail()), () => creationBody(refs, newEmail(uuidv7())));
    for (const [label, r] of [
      ['dedup', dedupReplay],
      ['new', newReplay],
    ] as const) {
      say(`  statements of one creation (${label}), replayed by pgbench with ${r.freshIds} new ids per transaction:`);
      for (const [i, st] of r.outline.entries()) say(`    ${String(i + 1).padStart(2)}. ${st}`);
    }

    // The stack is stopped first, so that crm's outbox relay does not publish pgbench's rows.
    await this.bench.stopStack();
    const replay = async (label: string, r: ReplayScript, shape: Shape) => {
      const name = `lead-create-${label}-${shape.connections}c`;
      const spec = {
        ...this.bench.pgbenchSpec(name, r.script, shape.connections, shape.durationS, shape.warmupS, this.s.pgbenchThreads),
        perStatement: true,
      };
      await analyze();
      return this.bench.sampledPhase(`POST ${label} pgbench ${shape.connections}c`, () => pgbench(spec, this.bench.onPgbench));
    };
    const pgDedup = await replay('dedup', dedupReplay, many);
    this.bench.line(
      'pgbench, the dedup creation (ceiling)',
      { ...pgDedup.value, unexpected: pgDedup.value.failed },
      pgDedup.cores,
      'postgres',
    );
    const pgDedupOne = await replay('dedup', dedupReplay, one);
    this.bench.line(
      'pgbench, the dedup creation, one client',
      { ...pgDedupOne.value, unexpected: pgDedupOne.value.failed },
      pgDedupOne.cores,
      'postgres',
    );
    const pgNew = await replay('new', newReplay, many);
    this.bench.line(
      'pgbench, the new-person creation (ceiling)',
      { ...pgNew.value, unexpected: pgNew.value.failed },
      pgNew.cores,
      'postgres',
    );
    say(
      `  ratios gateway POST / pgbench: dedup ${f3(ratio(dedup.value.rate, pgDedup.value.rate))} at ${this.s.connections}c, ` +
        `${f3(ratio(dedupOne.value.rate, pgDedupOne.value.rate))} at one connection; new person ${f3(ratio(fresh.value.rate, pgNew.value.rate))} at ${this.s.connections}c`,
    );
    for (const [label, r] of [
      [`dedup ${this.s.connections}c`, pgDedup.value],
      ['dedup 1c', pgDedupOne.value],
      [`new ${this.s.connections}c`, pgNew.value],
    ] as const) {
      const top = [...r.statements].sort((x, y) => y.ms - x.ms).slice(0, 4);
      say(`  pgbench ${label}, slowest statements (mean ms): ${top.map((t) => `${t.ms.toFixed(2)} ${t.sql.slice(0, 70)}`).join(' | ')}`);
    }
    await this.explainDedupSearch(newReplay, 'with the statistics the runs left');
    await analyze();
    await this.explainDedupSearch(newReplay, 'after ANALYZE');
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
  private async explainDedupSearch(replay: ReplayScript, when: string) {
    const i = replay.outline.indexOf('crm_person_find_by_contacts');
    if (i < 0) return;
    const sql = replay.lines[i]!.replace(/:fresh_\d+/g, "'00000000-0000-7000-8000-000000000000'");
    const client = new pg.Client({ connectionString: databaseUrl(this.bench.database), options: '-c search_path=crm' });
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
  private async captureCreation(
    s: { companyId: string; userId: string },
    warm: Record<string, unknown>,
    measured: () => Record<string, unknown>,
  ): Promise<ReplayScript> {
    const orm = await createOrm({
      url: databaseUrl(this.bench.database),
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
      const leads = new Leads(ctx as ServiceContext, {
        origins: marketingOrigins(poolOf(orm)),
        sources: { chats: null, tasks: null },
      });
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
}
