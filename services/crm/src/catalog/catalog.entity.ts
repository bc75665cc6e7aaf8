import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export const Tag = defineEntity({
  name: 'Tag',
  tableName: 'tags',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(100),
    colorBackground: p.string().length(32).nullable(),
    colorForeground: p.string().length(32).nullable(),
  },
});
export type Tag = InferEntity<typeof Tag>;

export const CustomField = defineEntity({
  name: 'CustomField',
  tableName: 'custom_fields',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    entity: p.string().length(20),
    name: p.string().length(200),
    type: p.string().length(20),
    required: p.boolean(),
    createdAt: p.datetime(),
  },
});
export type CustomField = InferEntity<typeof CustomField>;

export const CustomFieldOption = defineEntity({
  name: 'CustomFieldOption',
  tableName: 'custom_field_options',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    fieldId: p.uuid().index(),
    value: p.string().length(500),
    position: p.integer(),
  },
});
export type CustomFieldOption = InferEntity<typeof CustomFieldOption>;

/** One row per option of a multiselect; the field says which entity `recordId` belongs to. */
export const CustomFieldValue = defineEntity({
  name: 'CustomFieldValue',
  tableName: 'custom_field_values',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    fieldId: p.uuid(),
    recordId: p.uuid(),
    optionId: p.uuid().nullable(),
    value: p.text().nullable(),
    createdAt: p.datetime(),
  },
  indexes: [{ name: 'custom_field_values_record_field_idx', properties: ['recordId', 'fieldId'] }],
});
export type CustomFieldValue = InferEntity<typeof CustomFieldValue>;

export const LeadSource = defineEntity({
  name: 'LeadSource',
  tableName: 'lead_sources',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(200),
    logo: p.text().nullable(),
  },
});
export type LeadSource = InferEntity<typeof LeadSource>;

export const Tracker = defineEntity({
  name: 'Tracker',
  tableName: 'trackers',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    code: p.string().length(200),
    leadSourceId: p.uuid(),
    active: p.boolean(),
  },
  uniques: [{ name: 'trackers_company_code_unique', properties: ['companyId', 'code'] }],
});
export type Tracker = InferEntity<typeof Tracker>;

export const NAMED_ITEM_NAME_MAX = 200;

/** Loss reasons, gain reasons, follower roles and conversion tools: named lists of one company. */
export const NamedItem = defineEntity({
  name: 'NamedItem',
  tableName: 'named_items',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    kind: p.string().length(30),
    name: p.string().length(NAMED_ITEM_NAME_MAX),
  },
  indexes: [{ name: 'named_items_company_kind_idx', properties: ['companyId', 'kind'] }],
});
export type NamedItem = InferEntity<typeof NamedItem>;
