import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export const Person = defineEntity({
  name: 'Person',
  tableName: 'persons',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(200),
    birthDate: p.datetime().nullable(),
    gender: p.integer().nullable(),
    notes: p.text().nullable(),
    createdAt: p.datetime(),
  },
});
export type Person = InferEntity<typeof Person>;

/** Contact types of the spec's Person object. */
export const CONTACT_TYPES = { email: 1, phone: 2, website: 3, other: 4 } as const;

/** Dedup comparison in SQL (as `normalizedContact` in TypeScript); `person_contacts_normalized_idx` is built on this exact expression. */
export const normalizedContactSql = (prefix = '') =>
  `(case when ${prefix}type = ${CONTACT_TYPES.email} then lower(trim(${prefix}value)) when ${prefix}type = ${CONTACT_TYPES.phone} then regexp_replace(${prefix}value, '\\D', '', 'g') else trim(${prefix}value) end)`;

export const PersonContact = defineEntity({
  name: 'PersonContact',
  tableName: 'person_contacts',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    personId: p.uuid().index(),
    type: p.integer(),
    value: p.string().length(500),
    primary: p.boolean(),
  },
  indexes: [
    { name: 'person_contacts_lookup_idx', properties: ['companyId', 'type', 'value'] },
    {
      name: 'person_contacts_normalized_idx',
      expression: (_columns, table, name) =>
        `create index "${name}" on ${table.qualifiedName} (company_id, type, ${normalizedContactSql()})`,
    },
  ],
});
export type PersonContact = InferEntity<typeof PersonContact>;

export const Organization = defineEntity({
  name: 'Organization',
  tableName: 'organizations',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(200),
    legalName: p.string().length(200).nullable(),
    document: p.string().length(100).nullable(),
    industry: p.string().length(200).nullable(),
    description: p.text().nullable(),
    phone: p.string().length(100).nullable(),
    email: p.string().length(320).nullable(),
    site: p.string().length(500).nullable(),
    logo: p.text().nullable(),
    createdAt: p.datetime(),
  },
});
export type Organization = InferEntity<typeof Organization>;
