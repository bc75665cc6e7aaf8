/**
 * The ceilings of lead creation and lead read: pgbench running the very statements crm sends to Postgres
 * (the texts of crm's LeadStore, built from the same entity definitions, so they cannot drift from the service),
 * against the bench database's `crm` schema, prepared once per connection (`-M prepared`) like crm's named
 * statements, with per-transaction latencies from pgbench's own log (-l). crm's bound parameters become SQL
 * literals, and `gen_random_uuid()` where every run needs a new id.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LeadStore } from '@svc/crm';
import { type Figures, figures, Samples } from './stats.js';

export interface LeadTxIds {
  companyId: string;
  userId: string;
}

export const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** A statement with its `$n` parameters replaced by SQL expressions, on one line, for a pgbench script. */
export function bound(text: string, values: Record<number, string>): string {
  const sql = text.replace(/\$(\d+)/g, (_, n: string) => {
    const v = values[Number(n)];
    if (v === undefined) throw new Error(`no value for $${n}`);
    return v;
  });
  return `${sql.replace(/\s+/g, ' ').trim()};`;
}

/**
 * One lead creation as crm runs it (services/crm/src/sales/sales.creation.ts): the reads statement
 * (stage of the primary pipeline, users, master user), then the write statement (sequence, lead, outbox row) in
 * autocommit; crm then wakes its relay in-process, with no notification (decision 0033). `leadRow` and `payload` are a real lead row and lead.created payload of this run
 * (same sizes as the service writes); the lead and event ids are new each time. (No marketing object in the
 * bench's body, so no origin look-up and no acquisition row.)
 */
export function leadCreationScript(store: LeadStore, ids: LeadTxIds & { leadRow: string; payload: string }): string {
  const cid = lit(ids.companyId);
  const uid = lit(ids.userId);
  return [
    bound(store.sales.createReads.text, { 1: cid, 2: 'null', 3: uid, 4: uid }),
    // crm's creation statement takes arrays, one element per lead (decision 0225); each pgbench client sends one.
    bound(store.sales.create.text, {
      1: cid,
      2: `array[jsonb_set(${lit(ids.leadRow)}::jsonb, '{id}', to_jsonb(gen_random_uuid()))]`,
      3: "array['[]'::jsonb]",
      4: 'array[gen_random_uuid()]',
      5: `array[${lit(ids.payload)}::jsonb]`,
      6: 'array[null::varchar]',
    }),
    '',
  ].join('\n');
}

/**
 * One GET /leads/{id} as crm runs it once the lead's detail is cached (LeadDetails, decision 0015): the check
 * statement for one read (visibility, the view queued and the queued ones counted, versions; decision 0226). crm sends
 * one such statement per lead at a time for all the reads of it waiting, so under load it sends far fewer than
 * pgbench does here, whose clients each count the lead's queued views.
 */
export function leadReadScript(store: LeadStore, ids: LeadTxIds & { leadId: string }): string {
  return [
    bound(store.detailCheck.text, {
      1: lit(ids.companyId),
      2: lit(ids.leadId),
      3: 'null',
      4: 'array[gen_random_uuid()]',
      5: `array[${lit(ids.userId)}]`,
    }),
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
  /** pgbench -r: the mean latency of each statement of the script (`statements` of the result). */
  perStatement?: boolean;
  /** The schema the script's unqualified names resolve in (crm by default). */
  searchPath?: string;
}

export interface PgbenchResult extends Figures {
  command: string;
  scriptFile: string;
  failed: number;
  reportedTps: number | undefined;
  /** With `perStatement`: each statement's mean latency (ms) as pgbench reports it, in script order. */
  statements: { ms: number; sql: string }[];
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
    'prepared',
    '-c',
    String(spec.clients),
    '-j',
    String(spec.threads),
    '-T',
    String(durationS),
    '-f',
    scriptFile,
    ...(logPrefix ? ['-l', `--log-prefix=${logPrefix}`] : []),
    ...(logPrefix && spec.perStatement ? ['-r'] : []),
    spec.database,
  ];
}

function runPgbench(argv: string[], onSpawn?: (pid: number) => void, searchPath = 'crm'): Promise<string> {
  return new Promise((resolve, reject) => {
    // Services' raw SQL is unqualified: their connections use search_path=<their schema>.
    const child = spawn('pgbench', argv, {
      env: { ...process.env, PGOPTIONS: `-c search_path=${searchPath}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
  if (spec.warmupS > 0) await runPgbench(args(spec, scriptFile, spec.warmupS), onSpawn, spec.searchPath);
  const logPrefix = path.join(spec.workDir, `${spec.name}_log`);
  const argv = args(spec, scriptFile, spec.durationS, logPrefix);
  const out = await runPgbench(argv, onSpawn, spec.searchPath);
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
  const report = out.split('statement latencies in milliseconds')[1] ?? '';
  const statements = [...report.matchAll(/^\s+([\d.]+)\s+(?:\d+\s+)?(.+)$/gm)].map((m) => ({ ms: Number(m[1]), sql: m[2]! }));
  return {
    ...figures(samples.values(), spec.durationS),
    command: `PGOPTIONS='-c search_path=${spec.searchPath ?? 'crm'}' pgbench ${argv.join(' ')}`,
    scriptFile,
    failed,
    reportedTps: tps ? Number(tps) : undefined,
    statements,
  };
}
