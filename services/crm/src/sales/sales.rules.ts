import { run } from '@svc/platform/db/native';
import { invalid } from '@svc/platform/errors';
import type { ServiceContext } from '@svc/platform/service';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { AnswerInput, AnswerPlan } from '../catalog/custom-field.answers.js';
import type { User } from '../companies/company.entity.js';
import type { MeasurementConsent } from '../marketing/acquisition.entity.js';
import { findOrCreateConversionTool, resolveOrigin } from '../marketing/origin.js';
import { type AcquisitionDraft, originSourceName } from '../marketing/tracking.js';
import type { Pipeline } from '../pipelines/pipeline.entity.js';
import type { Actor, Loaded } from './sales.base.js';
import type { SalesParticipant } from './sales.entity.js';
import { type SalesRecord, SalesStatus } from './sales.entity.js';
import type { CreateSalesBody } from './sales.schema.js';
import type { CreateReads, RichReads } from './sales.select.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { SalesSql } from './sales.sql.js';

/** Whether the record already holds exactly the answers a plan writes (rewriting them would change only their ids). */
export function holdsAnswers(before: Loaded<SalesRecord, SalesRelations>, plan: AnswerPlan): boolean {
  const key = (optionId: string | null | undefined, value: string | null | undefined) => `${optionId ?? ''}\u0000${value ?? ''}`;
  const held = before.rel.customFields
    .filter((c) => c.field.id === plan.field.field.id)
    .map((c) => key(c.value.optionId, c.value.value))
    .sort();
  const planned = plan.rows.map((r) => key(r.optionId, r.value)).sort();
  return held.length === planned.length && held.every((k, i) => k === planned[i]);
}

export const hasAnswer = (a: AnswerInput) =>
  (a.value !== null && a.value !== undefined && String(a.value).trim() !== '') || !!a.option_id || !!a.option_ids?.length;

export function participantRow(record: Pick<SalesRecord, 'id' | 'companyId'>, personId: string, main: boolean, at: Date): SalesParticipant {
  return { id: uuidv7(), companyId: record.companyId, recordId: record.id, personId, main, role: null, notes: null, createdAt: at };
}

/** A qualification in a funnel that demands a reason needs one (decision 0040). */
export function requireQualityReason(pipeline: Pipeline | undefined, rating: number | null, reason: string | null) {
  if (pipeline?.requiresQualityReason && rating !== null && !reason?.trim()) {
    throw invalid(`quality_reason: required by the pipeline ${pipeline.name} when quality_rating is set`);
  }
}

/** The columns a new lead or deal shares (salesRecordProperties). */
export type NewSalesRecord = ReturnType<typeof newSalesRecord>;

/**
 * The shared columns of a new record: open, in the checked stage, with the checked responsible; its code comes
 * from the company's sequence in the write statement.
 */
export function newSalesRecord(
  actor: Actor,
  body: Pick<CreateSalesBody, 'title' | 'visibility' | 'quality_rating' | 'quality_reason' | 'external_id'>,
  basics: { stage: { id: string }; pipeline: { id: string }; responsible: { id: string } },
  consent: MeasurementConsent,
  leadSourceId: string | null,
  now: Date,
) {
  return {
    id: uuidv7(),
    companyId: actor.companyId,
    code: 0,
    title: body.title,
    pipelineId: basics.pipeline.id,
    stageId: basics.stage.id,
    responsibleId: basics.responsible.id,
    createdById: actor.userId,
    status: SalesStatus.open as number,
    visibility: body.visibility ?? 0,
    measurementConsent: consent,
    qualityRating: body.quality_rating ?? null,
    qualityReason: body.quality_reason ?? null,
    value: null as number | null,
    leadSourceId,
    organizationId: null as string | null,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
    wonDate: null as Date | null,
    lostDate: null as Date | null,
    lastActivityAt: null,
    lostReasonDescription: null as string | null,
    externalId: body.external_id ?? null,
  };
}

/** What a creation sends for its checks: the fields its reads depend on. */
type CreationFields = Pick<CreateSalesBody, 'stage_id' | 'responsible_id' | 'quality_rating' | 'quality_reason' | 'custom_fields'>;

/**
 * The reads and checks every creation makes before it writes: the kind's `createReads` statement gives the stage,
 * the users and the required custom fields; each rule that fails is a 400 naming its field.
 */
export async function creationBasics(pool: Pool, sql: SalesSql<SalesRecord, SalesRelations>, actor: Actor, body: CreationFields) {
  const responsibleId = body.responsible_id ?? actor.userId;
  const [row] = await run(pool, sql.createReads, [actor.companyId, body.stage_id ?? null, responsibleId, actor.userId]);
  const found = sql.createReadsFromRow(row ?? {});
  const { stage, pipeline } = stageOf(found, body.stage_id);
  const { user: responsible, handedOver } = responsibleOf(found, responsibleId);
  const creator = found.users.find((u) => u.id === actor.userId);
  if (!creator) throw invalid('The key creator is not a user of the company');
  requireQualityReason(pipeline, body.quality_rating ?? null, body.quality_reason ?? null);
  const answered = new Set((body.custom_fields ?? []).filter(hasAnswer).map((a) => a.id));
  const missing = found.requiredFields.filter((f) => !answered.has(f.id));
  if (missing.length) throw invalid(`custom_fields: required fields missing: ${missing.map((f) => `${f.name} (${f.id})`).join(', ')}`);
  return { stage, pipeline, responsible, handedOver, creator, requested: found.users.find((u) => u.id === responsibleId), responsibleId };
}

/**
 * The origin of a creation (POST /leads rule 2): the manual one, the tracker's, or one found or made by name; and
 * the acquisition's conversion tool, made when the company has none of that name yet.
 */
export async function originOf(
  ctx: ServiceContext,
  actor: Actor,
  body: Pick<CreateSalesBody, 'crm_lead_source_id'>,
  draft: AcquisitionDraft | null,
) {
  const origin = await resolveOrigin(ctx.orm.em.fork(), actor.companyId, {
    crmLeadSourceId: body.crm_lead_source_id,
    svcCode: draft?.svc_code,
    sourceName: draft && originSourceName(draft),
  });
  await conversionToolOf(ctx, actor, draft);
  return origin;
}

/** The conversion tool an acquisition names is one of the company's (found by name without case, or made). */
export async function conversionToolOf(ctx: ServiceContext, actor: Actor, draft: AcquisitionDraft | null | undefined): Promise<void> {
  if (draft?.svc_conversion_tool) await findOrCreateConversionTool(ctx.orm.em.fork(), actor.companyId, draft.svc_conversion_tool);
}

/** The stage sent (400 when it is not the company's), else the first stage of the primary pipeline. */
export function stageOf(reads: CreateReads, stageId: string | undefined) {
  const { stage, pipeline } = reads;
  if (stage && pipeline) return { stage, pipeline };
  if (stageId) throw invalid('stage_id: no such stage in the company');
  if (!reads.hasPrimary) throw invalid('stage_id: the company has no primary pipeline; send stage_id');
  throw invalid('stage_id: the primary pipeline has no stages; send stage_id');
}

/**
 * The responsible user: the one sent, else the key creator (400 when not the company's). An inactive or
 * archived user hands the record to the account's master user (`handedOver`: an automatic note says so).
 */
export function responsibleOf(reads: CreateReads, id: string): { user: User; handedOver: boolean } {
  const user = reads.users.find((u) => u.id === id);
  if (!user) throw invalid('responsible_id: no such user in the company');
  if (user.active && !user.archived) return { user, handedOver: false };
  const master = reads.users.find((u) => u.id === reads.masterUserId);
  if (!master) throw new Error(`company ${reads.masterUserId} has no master user`);
  return { user: master, handedOver: true };
}

/** The followers a creation names must be users and follower roles of the company: a 400 before anything is written. */
export function checkFollowers(refs: RichReads, followers: readonly { user_id: string; role_id?: string | null | undefined }[]): void {
  followers.forEach((f, i) => {
    if (!refs.users.some((u) => u.id === f.user_id)) throw invalid(`followers[${i}].user_id: unknown user`);
    if (f.role_id && !refs.roles.some((r) => r.id === f.role_id)) throw invalid(`followers[${i}].role_id: unknown follower role`);
  });
}
