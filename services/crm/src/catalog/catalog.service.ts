import { inTransaction } from '@svc/platform/db/native';
import { invalidField, isUuid } from '@svc/platform/errors';
import { decodeCursor, encodeCursor } from '@svc/platform/http/cursor';
import { skipParam, takeParam } from '@svc/platform/http/parse';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { requireCompany } from '../companies/company.service.js';
import { conflictOnUnique } from '../db.js';
import type { CustomField, CustomFieldOption, NamedItem, Tag } from './catalog.entity.js';
import * as store from './catalog.store.js';

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

export async function createTag(pool: Pool, companyId: string, body: z.infer<typeof createTagBody>) {
  await requireCompany(pool, companyId);
  const tag: Tag = {
    id: uuidv7(),
    companyId,
    name: body.name,
    colorBackground: body.color?.background ?? null,
    colorForeground: body.color?.foreground ?? null,
  };
  await store.insertTag(pool, tag);
  return tagView(tag);
}
export const tagView = (t: Tag) => ({
  id: t.id,
  name: t.name,
  color: t.colorBackground || t.colorForeground ? { background: t.colorBackground, foreground: t.colorForeground } : null,
});

export async function createCustomField(pool: Pool, companyId: string, body: z.infer<typeof createCustomFieldBody>) {
  await requireCompany(pool, companyId);
  const field: CustomField = {
    id: uuidv7(),
    companyId,
    entity: body.entity,
    name: body.name,
    type: body.type,
    required: body.required ?? false,
    createdAt: new Date(),
  };
  const options = (body.options ?? []).map(
    (value, i): CustomFieldOption => ({ id: uuidv7(), companyId, fieldId: field.id, value, position: i + 1 }),
  );
  await inTransaction(pool, (tx) => store.insertCustomField(tx, field, options));
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

/** `cursor` (the last field's `(created_at, id)`) replaces `skip`. */
export async function listCustomFields(pool: Pool, companyId: string, q: z.infer<typeof listCustomFieldsQuery>) {
  const after = q.cursor ? decodeCursor(q.cursor) : null;
  const take = q.take ?? 100;
  const entity = q.entity ?? null;
  const [fields, total] = await Promise.all([
    store.customFieldPage(pool, companyId, {
      entity,
      after: after ? { at: new Date(after.at), id: after.id } : null,
      offset: after ? 0 : (q.skip ?? 0),
      limit: take + 1,
    }),
    store.countCustomFields(pool, companyId, entity),
  ]);
  const shown = fields.slice(0, take);
  const options = await store.optionsOf(
    pool,
    companyId,
    shown.map((f) => f.id),
  );
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

export async function createLeadSource(pool: Pool, companyId: string, body: z.infer<typeof createLeadSourceBody>) {
  await requireCompany(pool, companyId);
  const source = { id: uuidv7(), companyId, name: body.name, logo: body.logo ?? null };
  await store.insertLeadSource(pool, source);
  return { id: source.id, name: source.name, logo: source.logo };
}

export async function createTracker(pool: Pool, companyId: string, body: z.infer<typeof createTrackerBody>) {
  await requireCompany(pool, companyId);
  if (!isUuid(body.lead_source_id) || !(await store.findLeadSource(pool, companyId, body.lead_source_id))) {
    throw invalidField('lead_source_id', 'no such lead source in the company');
  }
  const tracker = { id: uuidv7(), companyId, code: body.code, leadSourceId: body.lead_source_id, active: body.active ?? true };
  await conflictOnUnique(() => store.insertTracker(pool, tracker), 'code: a tracker with this code already exists');
  return { id: tracker.id, code: tracker.code, lead_source_id: tracker.leadSourceId, active: tracker.active };
}

export async function createNamedItem(
  pool: Pool,
  companyId: string,
  kind: (typeof NAMED_KINDS)[keyof typeof NAMED_KINDS],
  body: z.infer<typeof createNamedItemBody>,
) {
  await requireCompany(pool, companyId);
  const item: NamedItem = { id: uuidv7(), companyId, kind, name: body.name };
  await store.insertNamedItem(pool, item);
  return { id: item.id, name: item.name };
}

export async function listNamedItems(pool: Pool, companyId: string, kind: (typeof NAMED_KINDS)[keyof typeof NAMED_KINDS]) {
  await requireCompany(pool, companyId);
  const items = await store.namedItems(pool, companyId, kind);
  return { total: items.length, records: items.map((i) => ({ id: i.id, name: i.name })) };
}
