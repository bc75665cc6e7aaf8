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
  indexes: [{ name: 'person_contacts_lookup_idx', properties: ['companyId', 'type', 'value'] }],
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
