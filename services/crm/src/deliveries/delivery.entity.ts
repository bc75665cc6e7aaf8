import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** Kept apart from sales pipelines so records never land in the wrong kind of stage (decision 0080). */
export const DeliveryPipeline = defineEntity({
  name: 'DeliveryPipeline',
  tableName: 'delivery_pipelines',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(200),
    isDefault: p.boolean(),
    createdAt: p.datetime(),
  },
});
export type DeliveryPipeline = InferEntity<typeof DeliveryPipeline>;

export const DeliveryStage = defineEntity({
  name: 'DeliveryStage',
  tableName: 'delivery_stages',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    pipelineId: p.uuid().index(),
    name: p.string().length(200),
    position: p.integer(),
  },
});
export type DeliveryStage = InferEntity<typeof DeliveryStage>;

/** Delivery `status` (the spec's integer; its values are ours, decision 0080). */
export const DeliveryStatus = { NOT_STARTED: 1, IN_PROGRESS: 2, DELIVERED: 3, CANCELLED: 4 } as const;

export const Delivery = defineEntity({
  name: 'Delivery',
  tableName: 'deliveries',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    code: p.integer(),
    title: p.string().length(150),
    description: p.text().nullable(),
    status: p.smallint(),
    pipelineId: p.uuid(),
    stageId: p.uuid(),
    responsibleId: p.uuid(),
    createdById: p.uuid(),
    dealId: p.uuid().nullable(),
    organizationId: p.uuid().nullable(),
    personId: p.uuid().nullable(),
    plannedStartDate: p.datetime().nullable(),
    plannedEndDate: p.datetime().nullable(),
    startedAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    completedById: p.uuid().nullable(),
    cancelledAt: p.datetime().nullable(),
    cancellationReason: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
  uniques: [{ name: 'deliveries_company_code_unique', properties: ['companyId', 'code'] }],
  indexes: [
    { name: 'deliveries_company_created_idx', properties: ['companyId', 'createdAt', 'id'] },
    { name: 'deliveries_company_deal_idx', properties: ['companyId', 'dealId'] },
  ],
});
export type Delivery = InferEntity<typeof Delivery>;
