/** Pure rules: the store reads the data, each failing rule is a 400 naming its field. */
import { invalidField, invalidFields, isUuid } from '@svc/platform/errors';
import { codeOf } from '@svc/platform/numbers';
import { v7 as uuidv7 } from 'uuid';
import { type AnswerInput, type AnswerPlan, type FieldDefinition, planAnswer } from '../catalog/custom-field.answers.js';
import type { User } from '../companies/company.entity.js';
import { CONTACT_TYPES } from '../contacts/contact.entity.js';
import type { PersonWithContacts } from '../contacts/contact.store.js';
import type { MeasurementConsent } from '../marketing/acquisition.entity.js';
import type { Pipeline } from '../pipelines/pipeline.entity.js';
import type { SalesParticipant } from './sales.entity.js';
import { type SalesRecord, SalesStatus } from './sales.entity.js';
import type { PersonReceipt } from './sales.idempotency.js';
import type { CreateSalesBody } from './sales.schema.js';
import type { CreateReads, RichReads } from './sales.select.js';
import type { SalesRelations } from './sales.snapshot.js';
import type { Loaded, RecordRef } from './sales.store.js';

export interface Actor {
  companyId: string;
  userId: string;
}

export function refOf(ref: string): RecordRef | null {
  if (isUuid(ref)) return { byId: true, value: ref };
  const code = codeOf(ref);
  return code === null ? null : { byId: false, value: code };
}

/** Rewriting the same answers would change only their ids. */
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
    throw invalidField('quality_reason', `required by the pipeline ${pipeline.name} when quality_rating is set`);
  }
}

export type NewSalesRecord = ReturnType<typeof newSalesRecord>;

/** The code comes from the company's sequence in the write statement. */
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

type CreationFields = Pick<CreateSalesBody, 'stage_id' | 'responsible_id' | 'quality_rating' | 'quality_reason' | 'custom_fields'>;

export function creationBasics(found: CreateReads, actor: Actor, body: CreationFields, responsibleId: string) {
  const { stage, pipeline } = stageOf(found, body.stage_id);
  const { user: responsible, handedOver } = responsibleOf(found, responsibleId);
  const creator = found.users.find((u) => u.id === actor.userId);
  if (!creator)
    throw invalidFields(
      [{ field: 'authorization', message: 'the key creator is not a user of the company' }],
      'The key creator is not a user of the company',
    );
  requireQualityReason(pipeline, body.quality_rating ?? null, body.quality_reason ?? null);
  const answered = new Set((body.custom_fields ?? []).filter(hasAnswer).map((a) => a.id));
  const missing = found.requiredFields.filter((f) => !answered.has(f.id));
  if (missing.length)
    throw invalidField('custom_fields', `required fields missing: ${missing.map((f) => `${f.name} (${f.id})`).join(', ')}`);
  return { stage, pipeline, responsible, handedOver, creator, requested: found.users.find((u) => u.id === responsibleId), responsibleId };
}

export function stageOf(reads: CreateReads, stageId: string | undefined) {
  const { stage, pipeline } = reads;
  if (stage && pipeline) return { stage, pipeline };
  if (stageId) throw invalidField('stage_id', 'no such stage in the company');
  if (!reads.hasPrimary) throw invalidField('stage_id', 'the company has no primary pipeline; send stage_id');
  throw invalidField('stage_id', 'the primary pipeline has no stages; send stage_id');
}

/** An inactive or archived responsible hands the record to the master user, with an automatic note. */
export function responsibleOf(reads: CreateReads, id: string): { user: User; handedOver: boolean } {
  const user = reads.users.find((u) => u.id === id);
  if (!user) throw invalidField('responsible_id', 'no such user in the company');
  if (user.active && !user.archived) return { user, handedOver: false };
  const master = reads.users.find((u) => u.id === reads.masterUserId);
  if (!master) throw new Error(`company ${reads.masterUserId} has no master user`);
  return { user: master, handedOver: true };
}

/** Checked before anything is written. */
export function checkFollowers(refs: RichReads, followers: readonly { user_id: string; role_id?: string | null | undefined }[]): void {
  followers.forEach((f, i) => {
    if (!refs.users.some((u) => u.id === f.user_id)) throw invalidField(`followers[${i}].user_id`, 'unknown user');
    if (f.role_id && !refs.roles.some((r) => r.id === f.role_id)) throw invalidField(`followers[${i}].role_id`, 'unknown follower role');
  });
}

/** Unknown tags, persons, organization or custom fields of a creation are a 400 naming the item; returns the answers' plans. */
export function checkReferences(
  refs: RichReads,
  body: Pick<CreateSalesBody, 'tags' | 'persons_id' | 'organization_id' | 'custom_fields'>,
  record: Pick<SalesRecord, 'id' | 'companyId'>,
): AnswerPlan[] {
  (body.tags ?? []).forEach((id, i) => {
    if (!refs.tags.some((t) => t.id === id)) throw invalidField(`tags[${i}]`, 'unknown tag');
  });
  (body.persons_id ?? []).forEach((id, i) => {
    if (!refs.persons.some((p) => p.person.id === id)) throw invalidField(`persons_id[${i}]`, 'unknown person');
  });
  if (body.organization_id && !refs.organization) throw invalidField('organization_id', 'unknown organization');
  return planAnswers(refs, body.custom_fields ?? [], record, false);
}

export function planAnswers(
  refs: Pick<RichReads, 'fields'>,
  answers: AnswerInput[],
  record: Pick<SalesRecord, 'id' | 'companyId'>,
  allowFiles: boolean,
  path = (i: number) => `custom_fields[${i}]`,
): AnswerPlan[] {
  const fields = new Map<string, FieldDefinition>(refs.fields.map((f) => [f.field.id, f]));
  const at = new Date();
  return answers.map((a, i) => planAnswer(fields, a, path(i), { companyId: record.companyId, recordId: record.id, at, allowFiles }));
}

const MATCHES: Record<number, PersonReceipt['match']> = {
  [CONTACT_TYPES.email]: 'email',
  [CONTACT_TYPES.phone]: 'phone',
  [CONTACT_TYPES.website]: 'website',
  [CONTACT_TYPES.other]: 'other',
};

/** Decision 0182: main person first. */
export function personReceipts(participants: PersonWithContacts[]): { person?: PersonReceipt; persons?: PersonReceipt[] } {
  const receipts = participants.map(
    (p): PersonReceipt => ({
      id: p.person.id,
      match: p.created ? 'created' : p.matchedType !== undefined ? (MATCHES[p.matchedType] ?? 'other') : 'id',
    }),
  );
  if (!receipts[0]) return {};
  return receipts.length > 1 ? { person: receipts[0], persons: receipts } : { person: receipts[0] };
}
