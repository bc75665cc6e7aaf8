import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export const Pipeline = defineEntity({
  name: 'Pipeline',
  tableName: 'pipelines',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(200),
    isPrimary: p.boolean(),
    requiresQualityReason: p.boolean(),
    createdAt: p.datetime(),
  },
});
export type Pipeline = InferEntity<typeof Pipeline>;

export const Stage = defineEntity({
  name: 'Stage',
  tableName: 'stages',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    pipelineId: p.uuid().index(),
    name: p.string().length(200),
    position: p.integer(),
  },
});
export type Stage = InferEntity<typeof Stage>;
