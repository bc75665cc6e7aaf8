import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@svc/platform/db/orm';
import { conflict, invalidField, isUuid } from '@svc/platform/errors';
import { decodeCursor, encodeCursor } from '@svc/platform/http/cursor';
import { skipParam, takeParam } from '@svc/platform/http/parse';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { requireCompany } from '../companies/company.service.js';
import { CustomField, CustomFieldOption, LeadSource, NamedItem, Tag, Tracker } from './catalog.entity.js';

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const color = z.string().trim().min(1).max(32);

export const CUSTOM_FIELD_TYPES = { text: 1, number: 2, date: 3, select: 4, multiselect: 5, file: 6 } as const;
type CustomFieldType = keyof typeof CUSTOM_FIELD_TYPES;

export const createTagBody = z.strictObject({
  name: name.max(100, 'must be at most 100 characters'),
  color: z.strictObject({ background: color, foreground: color }).nullable().optional(),
});
export const createCustomFieldBody = z
  .strictObject({
    entity: z.enum(['lead', 'deal']),
    name,
    type: z.enum(Object.keys(CUSTOM_FIELD_TYPES) as [CustomFieldType, ...CustomFieldType[]]),
    required: z.boolean().optional(),
    options: z.array(z.string().trim().min(1).max(500)).max(500).optional(),
  })
  .superRefine((b, ctx) => {
    const choice = b.type === 'select' || b.type === 'multiselect';
    if (choice && !b.options?.length) ctx.addIssue({ code: 'custom', path: ['options'], message: `are required for type ${b.type}` });
    if (!choice && b.options?.length) ctx.addIssue({ code: 'custom', path: ['options'], message: `are not allowed for type ${b.type}` });
    if (b.options && new Set(b.options).size !== b.options.length)
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'must be unique' });
  });
export const createLeadSourceBody = z.strictObject({ name, logo: z.url().max(2000).nullable().optional() });
export const createTrackerBody = z.strictObject({
  code: z.string().trim().min(1).max(200),
  lead_source_id: z.uuid('must be a UUID'),
  active: z.boolean().optional(),
});
export const createNamedItemBody = z.strictObject({ name });

export const NAMED_KINDS = {
  'loss-reasons': 'loss_reason',
  'gain-reasons': 'gain_reason',
  'follower-roles': 'follower_role',
  'conversion-tools': 'conversion_tool',
} as const;

export async function createTag(em: EntityManager, companyId: string, body: z.infer<typeof createTagBody>) {
  await requireCompany(em, companyId);
  const tag = em.create(Tag, {
    id: uuidv7(),
    companyId,
    name: body.name,
    colorBackground: body.color?.background ?? null,
    colorForeground: body.color?.foreground ?? null,
  });
  await em.flush();
  return tagView(tag);
}
export const tagView = (t: Tag) => ({
  id: t.id,
  name: t.name,
  color: t.colorBackground || t.colorForeground ? { background: t.colorBackground, foreground: t.colorForeground } : null,
});

export async function createCustomField(em: EntityManager, companyId: string, body: z.infer<typeof createCustomFieldBody>) {
  await requireCompany(em, companyId);
  const field = em.create(CustomField, {
    id: uuidv7(),
    companyId,
    entity: body.entity,
    name: body.name,
    type: body.type,
    required: body.required ?? false,
    createdAt: new Date(),
  });
  const options = (body.options ?? []).map((value, i) =>
    em.create(CustomFieldOption, { id: uuidv7(), companyId, fieldId: field.id, value, position: i + 1 }),
  );
  await em.flush();
  return customFieldView(field, options);
}
export const customFieldView = (f: CustomField, options: CustomFieldOption[]) => ({
  id: f.id,
  entity: f.entity,
  name: f.name,
  type: f.type,
  field_type: CUSTOM_FIELD_TYPES[f.type as CustomFieldType],
  required: f.required,
  options: options.map((o) => ({ id: o.id, value: o.value })),
});

export const listCustomFieldsQuery = z.strictObject({
  entity: z.enum(['lead', 'deal'], { message: 'must be lead or deal' }).optional(),
  skip: skipParam().optional(),
  take: takeParam(500).optional(),
  cursor: z.string().max(200).optional(),
});

/**
 * GET /custom-fields: the company's fields, by entity, in creation order, with their options; `cursor` (the last
 * field's `(created_at, id)`) replaces `skip`.
 */
export async function listCustomFields(em: EntityManager, companyId: string, q: z.infer<typeof listCustomFieldsQuery>) {
  const where = { companyId, ...(q.entity ? { entity: q.entity } : {}) };
  const after = q.cursor ? decodeCursor(q.cursor) : null;
  const take = q.take ?? 100;
  const page = after
    ? { ...where, $or: [{ createdAt: { $gt: new Date(after.at) } }, { createdAt: new Date(after.at), id: { $gt: after.id } }] }
    : where;
  const [fields, total] = await Promise.all([
    em.find(CustomField, page, { orderBy: { createdAt: 'asc', id: 'asc' }, offset: after ? 0 : (q.skip ?? 0), limit: take + 1 }),
    em.count(CustomField, where),
  ]);
  const shown = fields.slice(0, take);
  const options = shown.length
    ? await em.find(CustomFieldOption, { companyId, fieldId: { $in: shown.map((f) => f.id) } }, { orderBy: { position: 'asc' } })
    : [];
  const last = shown.at(-1);
  return {
    total,
    records: shown.map((f) =>
      customFieldView(
        f,
        options.filter((o) => o.fieldId === f.id),
      ),
    ),
    next_cursor: fields.length > take && last ? encodeCursor(last.createdAt.toISOString(), last.id) : null,
  };
}

export async function createLeadSource(em: EntityManager, companyId: string, body: z.infer<typeof createLeadSourceBody>) {
  await requireCompany(em, companyId);
  const source = em.create(LeadSource, { id: uuidv7(), companyId, name: body.name, logo: body.logo ?? null });
  await em.flush();
  return { id: source.id, name: source.name, logo: source.logo };
}

export async function createTracker(em: EntityManager, companyId: string, body: z.infer<typeof createTrackerBody>) {
  await requireCompany(em, companyId);
  if (!isUuid(body.lead_source_id) || !(await em.findOne(LeadSource, { id: body.lead_source_id, companyId }))) {
    throw invalidField('lead_source_id', 'no such lead source in the company');
  }
  const tracker = em.create(Tracker, {
    id: uuidv7(),
    companyId,
    code: body.code,
    leadSourceId: body.lead_source_id,
    active: body.active ?? true,
  });
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw conflict('code: a tracker with this code already exists');
    throw err;
  }
  return { id: tracker.id, code: tracker.code, lead_source_id: tracker.leadSourceId, active: tracker.active };
}

export async function createNamedItem(
  em: EntityManager,
  companyId: string,
  kind: (typeof NAMED_KINDS)[keyof typeof NAMED_KINDS],
  body: z.infer<typeof createNamedItemBody>,
) {
  await requireCompany(em, companyId);
  const item = em.create(NamedItem, { id: uuidv7(), companyId, kind, name: body.name });
  await em.flush();
  return { id: item.id, name: item.name };
}

/** The company's items of one kind, oldest first. */
export async function listNamedItems(em: EntityManager, companyId: string, kind: (typeof NAMED_KINDS)[keyof typeof NAMED_KINDS]) {
  await requireCompany(em, companyId);
  const items = await em.find(NamedItem, { companyId, kind }, { orderBy: { id: 'asc' } });
  return { total: items.length, records: items.map((i) => ({ id: i.id, name: i.name })) };
}
