import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import { Pipeline, Stage } from './pipeline.entity.js';

const PIPELINES = tableOf(Pipeline);
const STAGES = tableOf(Stage);

const LOCK_COMPANY = statement('crm_pipelines_lock_company', `select pg_advisory_xact_lock(hashtext('pipelines:' || $1))`);
const HAS_PRIMARY = statement(
  'crm_pipelines_has_primary',
  'select exists (select 1 from pipelines where company_id = $1 and is_primary) as found',
);
const DEMOTE_PRIMARY = statement(
  'crm_pipelines_demote_primary',
  'update pipelines set is_primary = false where company_id = $1 and is_primary',
);
const INSERT_PIPELINE = statement('crm_pipeline_insert', PIPELINES.insert());
const INSERT_STAGE = statement('crm_stage_insert', STAGES.insert());

/** Serializes the creations of a company's pipelines until the transaction ends (one primary pipeline). */
export async function lockCompanyPipelines(db: Db, companyId: string): Promise<void> {
  await run(db, LOCK_COMPANY, [companyId]);
}

export async function hasPrimary(db: Db, companyId: string): Promise<boolean> {
  const [row] = await run<{ found: boolean }>(db, HAS_PRIMARY, [companyId]);
  return row?.found ?? false;
}

export async function demotePrimary(db: Db, companyId: string): Promise<void> {
  await run(db, DEMOTE_PRIMARY, [companyId]);
}

export async function insertPipeline(db: Db, pipeline: Pipeline, stages: Stage[]): Promise<void> {
  await run(db, INSERT_PIPELINE, PIPELINES.values(pipeline));
  for (const s of stages) await run(db, INSERT_STAGE, STAGES.values(s));
}
