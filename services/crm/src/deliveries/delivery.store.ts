import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import type { RecordRef } from '../records/record.links.js';
import { Delivery, DeliveryPipeline, DeliveryStage } from './delivery.entity.js';

const PIPELINES = tableOf(DeliveryPipeline);
const STAGES = tableOf(DeliveryStage);
const DELIVERIES = tableOf(Delivery);
const SUMMARY = ['id', 'code', 'title', 'status'] as const;
export type DeliverySummary = Pick<Delivery, (typeof SUMMARY)[number]>;

const LOCK_COMPANY = statement(
  'crm_delivery_pipelines_lock_company',
  `select pg_advisory_xact_lock(hashtext('delivery-pipelines:' || $1))`,
);
const HAS_DEFAULT = statement(
  'crm_delivery_pipelines_has_default',
  'select exists (select 1 from delivery_pipelines where company_id = $1 and is_default) as found',
);
const DEMOTE_DEFAULT = statement(
  'crm_delivery_pipelines_demote_default',
  'update delivery_pipelines set is_default = false where company_id = $1 and is_default',
);
const INSERT_PIPELINE = statement('crm_delivery_pipeline_insert', PIPELINES.insert());
const INSERT_STAGE = statement('crm_delivery_stage_insert', STAGES.insert());
const PIPELINES_OF = statement(
  'crm_delivery_pipelines_of',
  `select ${PIPELINES.select('p')} from delivery_pipelines p where p.company_id = $1 order by p.created_at, p.id`,
);
const PIPELINE = statement(
  'crm_delivery_pipeline_by_id',
  `select ${PIPELINES.select('p')} from delivery_pipelines p where p.company_id = $1 and p.id = $2`,
);
const DEFAULT_PIPELINE = statement(
  'crm_delivery_pipeline_default',
  `select ${PIPELINES.select('p')} from delivery_pipelines p where p.company_id = $1 and p.is_default limit 1`,
);
const PIPELINES_BY_IDS = statement(
  'crm_delivery_pipelines_by_ids',
  `select ${PIPELINES.select('p')} from delivery_pipelines p where p.company_id = $1 and p.id = any($2::uuid[])`,
);
const STAGES_OF = statement(
  'crm_delivery_stages_of',
  `select ${STAGES.select('s')} from delivery_stages s where s.company_id = $1 order by s.position`,
);
const STAGE = statement(
  'crm_delivery_stage_by_id',
  `select ${STAGES.select('s')} from delivery_stages s where s.company_id = $1 and s.id = $2`,
);
const FIRST_STAGE = statement(
  'crm_delivery_stage_first',
  `select ${STAGES.select('s')} from delivery_stages s where s.company_id = $1 and s.pipeline_id = $2 order by s.position limit 1`,
);
const STAGES_BY_IDS = statement(
  'crm_delivery_stages_by_ids',
  `select ${STAGES.select('s')} from delivery_stages s where s.company_id = $1 and s.id = any($2::uuid[])`,
);

const byRef = (by: 'id' | 'code', lock: boolean) =>
  statement(
    `crm_delivery_by_${by}${lock ? '_locked' : ''}`,
    `select ${DELIVERIES.select('d')} from deliveries d where d.company_id = $1 and d.${by} = $2${lock ? ' for update' : ''}`,
  );
const BY_REF = { id: byRef('id', false), code: byRef('code', false), idLocked: byRef('id', true), codeLocked: byRef('code', true) };
const INSERT = statement('crm_delivery_insert', DELIVERIES.insert());
const UPDATE = statement('crm_delivery_update', DELIVERIES.update(['id', 'companyId']));
const PAGE = statement(
  'crm_deliveries_page',
  `select ${DELIVERIES.select('d')} from deliveries d where d.company_id = $1 order by d.created_at desc, d.id desc offset $2 limit $3`,
);
const COUNT = statement('crm_deliveries_count', 'select count(*)::int as n from deliveries where company_id = $1');
const EXISTS = statement('crm_delivery_exists', 'select exists (select 1 from deliveries where company_id = $1 and id = $2) as found');
const SUMMARIES = statement(
  'crm_delivery_summaries',
  `select ${DELIVERIES.select('d', SUMMARY)} from deliveries d where d.company_id = $1 and d.id = any($2::uuid[])`,
);

/** Serializes the creations of a company's delivery pipelines until the transaction ends (one default). */
export async function lockCompanyPipelines(db: Db, companyId: string): Promise<void> {
  await run(db, LOCK_COMPANY, [companyId]);
}

export async function hasDefaultPipeline(db: Db, companyId: string): Promise<boolean> {
  const [row] = await run<{ found: boolean }>(db, HAS_DEFAULT, [companyId]);
  return row?.found ?? false;
}

export async function demoteDefaultPipeline(db: Db, companyId: string): Promise<void> {
  await run(db, DEMOTE_DEFAULT, [companyId]);
}

export async function insertPipeline(db: Db, pipeline: DeliveryPipeline, stages: DeliveryStage[]): Promise<void> {
  await run(db, INSERT_PIPELINE, PIPELINES.values(pipeline));
  for (const s of stages) await run(db, INSERT_STAGE, STAGES.values(s));
}

/** The company's pipelines, oldest first, and all their stages in position order. */
export async function pipelinesWithStages(db: Db, companyId: string) {
  const pipelines = (await run(db, PIPELINES_OF, [companyId])).map((r) => PIPELINES.hydrate(r));
  const stages = (await run(db, STAGES_OF, [companyId])).map((r) => STAGES.hydrate(r));
  return { pipelines, stages };
}

/** The pipeline `id`, or the company's default one when `id` is absent. */
export async function findPipeline(db: Db, companyId: string, id?: string): Promise<DeliveryPipeline | null> {
  const [row] = id ? await run(db, PIPELINE, [companyId, id]) : await run(db, DEFAULT_PIPELINE, [companyId]);
  return row ? PIPELINES.hydrate(row) : null;
}

export async function findStage(db: Db, companyId: string, id: string): Promise<DeliveryStage | null> {
  const [row] = await run(db, STAGE, [companyId, id]);
  return row ? STAGES.hydrate(row) : null;
}

export async function firstStage(db: Db, companyId: string, pipelineId: string): Promise<DeliveryStage | null> {
  const [row] = await run(db, FIRST_STAGE, [companyId, pipelineId]);
  return row ? STAGES.hydrate(row) : null;
}

/** The stages of these ids and their pipelines. */
export async function stagesAndPipelines(db: Db, companyId: string, stageIds: string[]) {
  const stages = stageIds.length ? (await run(db, STAGES_BY_IDS, [companyId, stageIds])).map((r) => STAGES.hydrate(r)) : [];
  const pipelineIds = [...new Set(stages.map((s) => s.pipelineId))];
  const pipelines = pipelineIds.length ? (await run(db, PIPELINES_BY_IDS, [companyId, pipelineIds])).map((r) => PIPELINES.hydrate(r)) : [];
  return { stages, pipelines };
}

/** The delivery `ref` names (by id or code); `lock` holds it until the transaction ends. */
export async function findDelivery(db: Db, ref: RecordRef, lock = false): Promise<Delivery | null> {
  const st = 'id' in ref ? (lock ? BY_REF.idLocked : BY_REF.id) : lock ? BY_REF.codeLocked : BY_REF.code;
  const [row] = await run(db, st, [ref.companyId, 'id' in ref ? ref.id : ref.code]);
  return row ? DELIVERIES.hydrate(row) : null;
}

export async function insertDelivery(db: Db, delivery: Delivery): Promise<void> {
  await run(db, INSERT, DELIVERIES.values(delivery));
}

export async function updateDelivery(db: Db, delivery: Delivery): Promise<void> {
  await run(db, UPDATE, DELIVERIES.values(delivery));
}

/** A page of the company's deliveries, newest first, and how many it has. */
export async function deliveryPage(db: Db, companyId: string, skip: number, take: number) {
  const records = (await run(db, PAGE, [companyId, skip, take])).map((r) => DELIVERIES.hydrate(r));
  const [count] = await run<{ n: number }>(db, COUNT, [companyId]);
  return { records, total: count?.n ?? 0 };
}

export async function deliveryExists(db: Db, companyId: string, id: string): Promise<boolean> {
  const [row] = await run<{ found: boolean }>(db, EXISTS, [companyId, id]);
  return row?.found ?? false;
}

export async function deliverySummaries(db: Db, companyId: string, ids: string[]): Promise<DeliverySummary[]> {
  return ids.length ? run<DeliverySummary>(db, SUMMARIES, [companyId, ids]) : [];
}
