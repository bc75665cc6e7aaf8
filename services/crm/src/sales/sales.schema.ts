import { z } from 'zod';
import { contactInput, createOrganizationBody } from '../contacts/contact.service.js';
import { MEASUREMENT_CONSENTS } from '../marketing/acquisition.entity.js';
import { marketingBody } from '../marketing/marketing.schema.js';

const uuid = z.uuid('must be a UUID');
const title = z.string().trim().min(1, 'must be 1 to 150 characters').max(150, 'must be 1 to 150 characters');
const qualityRating = z.number().int().min(1, 'must be an integer from 1 to 5').max(5, 'must be an integer from 1 to 5');
const qualityReason = z.string().trim().max(2000, 'must be at most 2000 characters');
const visibility = z.union([z.literal(0), z.literal(1)], { message: 'must be 0 or 1' });
const text = (max: number) => z.string().trim().max(max, `must be at most ${max} characters`);
/** Decision 0180: kept as sent; `ext:<id>` names the record. */
const externalId = z.string().min(1, 'must be 1 to 255 characters').max(255, 'must be 1 to 255 characters');

/** The Person object of lead create and update (spec "Person object"); contacts go in `contacts`, never phone/email. */
export const personInput = z.strictObject({
  name: text(200).min(1, 'must not be empty').optional(),
  birth_date: z.iso.datetime({ offset: true }).or(z.iso.date()).nullable().optional(),
  gender: z.number().int().min(0, 'must be 0 to 3').max(3, 'must be 0 to 3').nullable().optional(),
  notes: text(10_000).nullable().optional(),
  contacts: z.array(contactInput).max(50).optional(),
  avoid_duplicate: z.boolean().optional(),
  duplicate_check_types: z.array(z.number().int().min(1).max(4)).max(4).optional(),
});
export type PersonInput = z.infer<typeof personInput>;

export const organizationInput = createOrganizationBody.omit({ logo: true });

/** A custom field answer: `{id, value, option_id, option_ids}`; an answer with none of them clears the field (update). */
export const customFieldAnswer = z.strictObject({
  id: uuid,
  value: z.union([z.string(), z.number()]).nullable().optional(),
  option_id: uuid.nullable().optional(),
  option_ids: z.array(uuid).max(500).nullable().optional(),
});
export type CustomFieldAnswerInput = z.infer<typeof customFieldAnswer>;

const uniqueIds = <T>(items: T[], id: (t: T) => string) => new Set(items.map(id)).size === items.length;

const customFieldAnswers = z
  .array(customFieldAnswer)
  .max(500)
  .refine((a) => uniqueIds(a, (x) => x.id), 'must not answer a field twice');

/** Strict: a forbidden or unknown field is a 400 naming it, never silently dropped. */
export const createSalesFields = z.strictObject({
  title,
  stage_id: uuid.optional(),
  responsible_id: uuid.optional(),
  quality_rating: qualityRating.optional(),
  quality_reason: qualityReason.nullable().optional(),
  visibility: visibility.optional(),
  tags: z.array(uuid).max(100).optional(),
  persons_id: z.array(uuid).max(100).optional(),
  person: personInput.nullable().optional(),
  organization_id: uuid.nullable().optional(),
  organization: organizationInput.nullable().optional(),
  custom_fields: customFieldAnswers.optional(),
  measurement_consent: z.enum(MEASUREMENT_CONSENTS, { message: 'must be GRANTED, DENIED or UNSPECIFIED' }).optional(),
  /** null is the same as not sending it. */
  marketing: marketingBody.nullable().optional(),
  /** The only manual origin: a lead source of the company (else 400). */
  crm_lead_source_id: uuid.nullable().optional(),
  followers: z
    .array(z.strictObject({ user_id: uuid, role_id: uuid.nullable().optional() }))
    .max(100)
    .optional(),
  note: z
    .strictObject({ content: z.string().trim().min(1, 'must not be empty').max(20_000), is_pinned: z.boolean().optional() })
    .nullable()
    .optional(),
  idempotency_key: idempotencyKey().optional(),
  external_id: externalId.optional(),
});

/** organization_id and organization together are a 400 on organization_id (creation of a lead or a deal). */
export function organizationConflict(b: { organization_id?: string | null | undefined; organization?: unknown }, ctx: z.RefinementCtx) {
  if (b.organization_id && b.organization) {
    ctx.addIssue({ code: 'custom', path: ['organization_id'], message: 'conflicts with organization; send one of them' });
  }
}

export type CreateSalesBody = z.infer<typeof createSalesFields>;

export function idempotencyKey() {
  return z.string().trim().min(1, 'must be 1 to 255 characters').max(255, 'must be 1 to 255 characters');
}

/** Title required; omitted fields keep their value. */
export const updateSalesFields = z.strictObject({
  title,
  stage_id: uuid.optional(),
  responsible_id: uuid.optional(),
  quality_rating: qualityRating.nullable().optional(),
  quality_reason: qualityReason.nullable().optional(),
  phone: text(100).min(1, 'must not be empty').optional(),
  email: z.email('must be an e-mail address').max(320).optional(),
  visibility: visibility.optional(),
  persons_id: z
    .array(z.strictObject({ person_id: uuid, delete: z.boolean().optional() }))
    .max(100)
    .refine((a) => uniqueIds(a, (x) => x.person_id), 'must not name a person twice')
    .optional(),
  person: personInput.nullable().optional(),
  organization_id: uuid.nullable().optional(),
  organization: organizationInput.nullable().optional(),
  custom_fields: customFieldAnswers.optional(),
  marketing: marketingBody.nullable().optional(),
  crm_lead_source_id: uuid.nullable().optional(),
  lead_source: z
    .strictObject({ name: text(200).min(1, 'must not be empty') })
    .nullable()
    .optional(),
  /** null removes the record's external id. */
  external_id: externalId.nullable().optional(),
});

export function updateConflicts(
  b: {
    organization_id?: string | null | undefined;
    organization?: unknown;
    crm_lead_source_id?: string | null | undefined;
    lead_source?: unknown;
  },
  ctx: z.RefinementCtx,
) {
  if (b.organization_id !== undefined && b.organization) {
    ctx.addIssue({ code: 'custom', path: ['organization_id'], message: 'conflicts with organization; send one of them' });
  }
  if (b.crm_lead_source_id && b.lead_source) {
    ctx.addIssue({ code: 'custom', path: ['lead_source'], message: 'conflicts with crm_lead_source_id; send one of them' });
  }
}

export type UpdateSalesBody = z.infer<typeof updateSalesFields>;
