/**
 * `tsx bench/experiments/views.ts`: what recording a view costs Postgres when many GETs read ONE lead versus
 * many leads (row contention on leads.views_count). pgbench runs crm's own GET-by-code statement (LeadStore) at
 * BENCH_CONNECTIONS clients (10, crm's pool) for 8 s: every transaction on lead 1, then on a random lead of 100.
 */
import { execFileSync } from 'node:child_process';
import { dbDefinition, LeadStore } from '@svc/crm';
import { createOrm, migrate } from '@svc/platform/db/orm';
import { adminQuery, createDatabase, databaseUrl, dropDatabase } from '../lib/infra.js';
import { bound, lit, pgbench } from '../lib/pgbench.js';

const C = Number(process.env.BENCH_CONNECTIONS ?? 10);
const database = `svc_bench_views_${Date.now()}`;
await createDatabase(database);
try {
  const orm = await createOrm({
    url: databaseUrl(database),
    schema: 'crm',
    entities: dbDefinition.entities,
    migrations: dbDefinition.migrations,
    poolMax: 2,
  });
  await migrate(orm, 'crm');
  const sql = new LeadStore(orm);
  await orm.close(true);
  const company = '01a20000-0000-7000-8000-000000000001';
  const user = '01a20000-0000-7000-8000-000000000002';
  const pipeline = '01a20000-0000-7000-8000-000000000003';
  const stage = '01a20000-0000-7000-8000-000000000004';
  await adminQuery(
    `insert into crm.companies (id, name, master_user_id, created_at) values ('${company}', 'c', '${user}', now());
     insert into crm.users (id, company_id, name, email, active, archived, created_at) values ('${user}', '${company}', 'u', 'u@x', true, false, now());
     insert into crm.pipelines (id, company_id, name, is_primary, requires_quality_reason, created_at) values ('${pipeline}', '${company}', 'p', true, false, now());
     insert into crm.stages (id, company_id, pipeline_id, name, position) values ('${stage}', '${company}', '${pipeline}', 's', 1);
     insert into crm.leads (id, company_id, code, title, pipeline_id, stage_id, responsible_id, created_by_id, status, visibility, created_at, updated_at)
       select gen_random_uuid(), '${company}', g, 'lead ' || g, '${pipeline}', '${stage}', '${user}', '${user}', 1, 0, now(), now() from generate_series(1, 100) g;`,
    database,
  );
  for (const [label, code] of [
    ['one lead', '1'],
    ['100 leads', ':code'],
  ] as const) {
    const script = `${code === ':code' ? '\\set code random(1, 100)\n' : ''}${bound(sql.detailByCode.text, { 1: lit(company), 2: code, 3: 'gen_random_uuid()', 4: lit(user) })}\n`;
    const r = await pgbench({
      name: `views-${label.replace(' ', '')}`,
      database,
      host: '127.0.0.1',
      port: 5432,
      user: 'postgres',
      clients: C,
      threads: 1,
      durationS: 8,
      warmupS: 1,
      script,
      workDir: '/tmp/vexp',
    });
    process.stdout.write(
      `${label.padEnd(10)} ${C} clients: ${r.rate.toFixed(0)} tps, p50 ${r.p50us.toFixed(0)} µs, p99 ${r.p99us.toFixed(0)} µs\n`,
    );
  }
  void execFileSync;
} finally {
  await dropDatabase(database);
}
