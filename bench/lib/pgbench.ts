/**
 * The ceiling of lead creation: pgbench running the statements crm sends to Postgres for one
 * POST /leads (copied from the server's statement log of a real creation, in the same order, as
 * literal SQL over the simple protocol like the ORM sends them), against the bench database's `crm`
 * schema, with per-transaction latencies from pgbench's own log (-l). The statements are those of
 * commit 2be283f (log_statement = 'all' on a scratch database): when createLead or getLeadDetail
 * change their queries, capture them again and update the two scripts below.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Figures, figures, Samples } from './stats.js';

export interface LeadTxIds {
  companyId: string;
  userId: string;
  pipelineId: string;
  stageId: string;
  /** The JSON of a real lead.created outbox payload (same size as the service writes). */
  payload: string;
}

const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * One lead creation as crm runs it (services/crm/src/leads/lead.service.ts createLead, inside
 * em.transactional): resolveStage (primary pipeline, its first stage), resolveResponsible (the key
 * creator), nextCode (company_sequences upsert ... returning value, which locks the company's row until
 * commit), recordEvents (the eventGate's company look-up, pg_notify, then the outbox row on flush), the
 * lead row, commit. (No marketing object in the bench's body, so no origin look-up or acquisition row.)
 */
export function leadCreationScript(ids: LeadTxIds): string {
  const cid = lit(ids.companyId);
  const uid = lit(ids.userId);
  return [
    'BEGIN;',
    `select "p0".* from "crm"."pipelines" as "p0" where "p0"."company_id" = ${cid} and "p0"."is_primary" = true limit 1;`,
    `select "s0".* from "crm"."stages" as "s0" where "s0"."company_id" = ${cid} and "s0"."pipeline_id" = ${lit(ids.pipelineId)} order by "s0"."position" asc limit 1;`,
    `select "u0".* from "crm"."users" as "u0" where "u0"."id" = ${uid} and "u0"."company_id" = ${cid} limit 1;`,
    `insert into company_sequences (company_id, entity, value) values (${cid}, 'lead', 1) on conflict (company_id, entity) do update set value = company_sequences.value + 1 returning value \\gset seq_`,
    // crm's eventGate (services/crm/src/service.ts): is the company's plan valid, asked inside the transaction.
    `select "c0".* from "crm"."companies" as "c0" where "c0"."id" = ${cid} limit 1;`,
    `select pg_notify('outbox_crm', '');`,
    `insert into "crm"."outbox" ("id", "company_id", "event_key", "payload", "occurred_at", "published_at") values (gen_random_uuid(), ${cid}, 'lead.created', ${lit(ids.payload)}, now(), null);`,
    `insert into "crm"."leads" ("id", "company_id", "code", "title", "pipeline_id", "stage_id", "responsible_id", "created_by_id", "status", "visibility", "measurement_consent", "quality_rating", "quality_reason", "value", "lead_source_id", "organization_id", "created_at", "updated_at", "archived_at", "won_date", "lost_date", "last_activity_at") values (gen_random_uuid(), ${cid}, :seq_value, 'bench lead', ${lit(ids.pipelineId)}, ${lit(ids.stageId)}, ${uid}, ${uid}, 1, 0, 'GRANTED', null, null, null, null, null, now(), now(), null, null, null, null);`,
    'COMMIT;',
    '',
  ].join('\n');
}

/**
 * One GET /leads/{id} as crm runs it (lead.service.ts getLeadDetail): the lead, the view insert (the
 * ORM's flush: begin, insert, commit), the relations (stages, pipeline, users), the latest marketing
 * acquisition and the views count.
 */
export function leadReadScript(ids: LeadTxIds & { leadId: string }): string {
  const cid = lit(ids.companyId);
  const lid = lit(ids.leadId);
  const uid = lit(ids.userId);
  const pid = lit(ids.pipelineId);
  return [
    `select "l0".* from "crm"."leads" as "l0" where "l0"."id" = ${lid} and "l0"."company_id" = ${cid} limit 1;`,
    'begin;',
    `insert into "crm"."lead_views" ("id", "company_id", "lead_id", "user_id", "viewed_at") values (gen_random_uuid(), ${cid}, ${lid}, ${uid}, now());`,
    'commit;',
    `select "s0".* from "crm"."stages" as "s0" where "s0"."company_id" = ${cid} and "s0"."pipeline_id" = ${pid} order by "s0"."position" asc;`,
    `select "p0".* from "crm"."pipelines" as "p0" where "p0"."id" = ${pid} and "p0"."company_id" = ${cid} limit 1;`,
    `select "u0".* from "crm"."users" as "u0" where "u0"."company_id" = ${cid} and "u0"."id" in (${uid});`,
    `select "m0".* from "crm"."marketing_acquisitions" as "m0" where "m0"."company_id" = ${cid} and "m0"."lead_id" = ${lid} and "m0"."active" = true order by "m0"."created_at" desc, "m0"."id" desc limit 1;`,
    `select count(*) as "count" from "crm"."lead_views" as "l0" where "l0"."company_id" = ${cid} and "l0"."lead_id" = ${lid};`,
    '',
  ].join('\n');
}

export interface PgbenchSpec {
  /** Names the script and log files of this run. */
  name: string;
  database: string;
  host: string;
  port: number;
  user: string;
  clients: number;
  threads: number;
  durationS: number;
  warmupS: number;
  script: string;
  workDir: string;
}

export interface PgbenchResult extends Figures {
  command: string;
  scriptFile: string;
  failed: number;
  reportedTps: number | undefined;
}

function args(spec: PgbenchSpec, scriptFile: string, durationS: number, logPrefix?: string): string[] {
  return [
    '-n',
    '-h',
    spec.host,
    '-p',
    String(spec.port),
    '-U',
    spec.user,
    '-M',
    'simple',
    '-c',
    String(spec.clients),
    '-j',
    String(spec.threads),
    '-T',
    String(durationS),
    '-f',
    scriptFile,
    ...(logPrefix ? ['-l', `--log-prefix=${logPrefix}`] : []),
    spec.database,
  ];
}

function runPgbench(argv: string[], onSpawn?: (pid: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    // crm's raw SQL (company_sequences) is unqualified: its connections use search_path=crm.
    const child = spawn('pgbench', argv, { env: { ...process.env, PGOPTIONS: '-c search_path=crm' }, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid) onSpawn?.(child.pid);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`pgbench exited with ${code}:\n${out}`))));
  });
}

export async function pgbench(spec: PgbenchSpec, onSpawn?: (pid: number) => void): Promise<PgbenchResult> {
  mkdirSync(spec.workDir, { recursive: true });
  const scriptFile = path.join(spec.workDir, `${spec.name}.sql`);
  writeFileSync(scriptFile, spec.script);
  if (spec.warmupS > 0) await runPgbench(args(spec, scriptFile, spec.warmupS), onSpawn);
  const logPrefix = path.join(spec.workDir, `${spec.name}_log`);
  const argv = args(spec, scriptFile, spec.durationS, logPrefix);
  const out = await runPgbench(argv, onSpawn);
  const samples = new Samples();
  let failed = 0;
  for (const file of readdirSync(spec.workDir).filter((f) => f.startsWith(`${spec.name}_log.`))) {
    for (const line of readFileSync(path.join(spec.workDir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const latency = line.split(' ')[2];
      if (latency && /^\d+$/.test(latency)) samples.push(Number(latency));
      else failed++;
    }
  }
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1];
  return {
    ...figures(samples.values(), spec.durationS),
    command: `PGOPTIONS='-c search_path=crm' pgbench ${argv.join(' ')}`,
    scriptFile,
    failed,
    reportedTps: tps ? Number(tps) : undefined,
  };
}
