import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** Customer `type` (the spec's integer; its values are ours, decision 0165). */
export const CustomerType = { PERSON: 1, ORGANIZATION: 2 } as const;

/** Customer `status` (the spec's integer; its values are ours, decision 0165). */
export const CustomerStatus = { ACTIVE: 1, INACTIVE: 2 } as const;

/** Decision 0165: exactly one of `personId` and `organizationId`, matching `type`; one customer per party. */
export const Customer = defineEntity({
  name: 'Customer',
  tableName: 'customers',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    code: p.integer(),
    type: p.smallint(),
    status: p.smallint(),
    personId: p.uuid().nullable(),
    organizationId: p.uuid().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  uniques: [
    { name: 'customers_company_code_unique', properties: ['companyId', 'code'] },
    { name: 'customers_company_person_unique', properties: ['companyId', 'personId'] },
    { name: 'customers_company_organization_unique', properties: ['companyId', 'organizationId'] },
  ],
  checks: [
    {
      name: 'customers_party_check',
      expression: `("type" = ${CustomerType.PERSON} and "person_id" is not null and "organization_id" is null) or ("type" = ${CustomerType.ORGANIZATION} and "organization_id" is not null and "person_id" is null)`,
    },
  ],
});
export type Customer = InferEntity<typeof Customer>;
