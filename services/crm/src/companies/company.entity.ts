import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export const Company = defineEntity({
  name: 'Company',
  tableName: 'companies',
  properties: {
    id: p.uuid().primary(),
    name: p.string().length(200),
    planValidUntil: p.datetime().nullable(),
    masterUserId: p.uuid(),
    createdAt: p.datetime(),
  },
});
export type Company = InferEntity<typeof Company>;

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(200),
    email: p.string().length(320),
    avatar: p.text().nullable(),
    active: p.boolean(),
    archived: p.boolean(),
    createdAt: p.datetime(),
  },
  uniques: [{ name: 'users_company_email_unique', properties: ['companyId', 'email'] }],
});
export type User = InferEntity<typeof User>;

export const IntegrationKey = defineEntity({
  name: 'IntegrationKey',
  tableName: 'integration_keys',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    createdByUserId: p.uuid(),
    /** SHA-256 (hex) of the plain key; the plain key is shown once and never stored. */
    keyHash: p.string().length(64).unique(),
    permissions: p.json<string[]>(),
    allowedDomain: p.string().length(253).nullable(),
    validFrom: p.datetime().nullable(),
    validUntil: p.datetime().nullable(),
    active: p.boolean(),
    rateLimitPerMinute: p.integer().nullable(),
    deletedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type IntegrationKey = InferEntity<typeof IntegrationKey>;

/** Per-company counters behind every `code` (leads, deals, ...). */
export const CompanySequence = defineEntity({
  name: 'CompanySequence',
  tableName: 'company_sequences',
  properties: {
    companyId: p.uuid().primary(),
    entity: p.string().length(50).primary(),
    value: p.bigint('number'),
  },
});
