import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** Contract `status` (our codes, decision 0081). */
export const ContractStatus = { ACTIVE: 1, CANCELED: 2, COMPLETED: 3 } as const;

/** Periods are whole days, stored as midnight UTC. */
export const Contract = defineEntity({
  name: 'Contract',
  tableName: 'contracts',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    code: p.integer(),
    title: p.string().length(150),
    description: p.text().nullable(),
    status: p.smallint(),
    value: p.decimal('number').precision(14).scale(2).nullable(),
    startDate: p.datetime(),
    endDate: p.datetime().nullable(),
    dealId: p.uuid().nullable(),
    deliveryId: p.uuid().nullable(),
    organizationId: p.uuid().nullable(),
    personId: p.uuid().nullable(),
    responsibleId: p.uuid(),
    createdById: p.uuid(),
    renewalCount: p.integer(),
    lastRenewedAt: p.datetime().nullable(),
    canceledAt: p.datetime().nullable(),
    canceledById: p.uuid().nullable(),
    cancellationReason: p.text().nullable(),
    completedAt: p.datetime().nullable(),
    completedById: p.uuid().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  uniques: [{ name: 'contracts_company_code_unique', properties: ['companyId', 'code'] }],
  indexes: [{ name: 'contracts_company_created_idx', properties: ['companyId', 'createdAt', 'id'] }],
});
export type Contract = InferEntity<typeof Contract>;

/** One renewal of a contract: the period end and value it had and got. */
export const ContractRenewal = defineEntity({
  name: 'ContractRenewal',
  tableName: 'contract_renewals',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    contractId: p.uuid().index(),
    renewedAt: p.datetime(),
    renewedById: p.uuid(),
    previousEndDate: p.datetime(),
    newEndDate: p.datetime(),
    previousValue: p.decimal('number').precision(14).scale(2).nullable(),
    newValue: p.decimal('number').precision(14).scale(2).nullable(),
  },
});
export type ContractRenewal = InferEntity<typeof ContractRenewal>;
