import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

export const TaskType = defineEntity({
  name: 'TaskType',
  tableName: 'task_types',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(200),
    icon: p.string().length(100).nullable(),
    isMeeting: p.boolean(),
    defaultDurationMinutes: p.integer().nullable(),
    createdAt: p.datetime(),
  },
});
export type TaskType = InferEntity<typeof TaskType>;

export const TaskStage = defineEntity({
  name: 'TaskStage',
  tableName: 'task_stages',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid().index(),
    name: p.string().length(200),
    color: p.string().length(32).nullable(),
    isCompletion: p.boolean(),
    position: p.integer(),
    active: p.boolean(),
    createdAt: p.datetime(),
  },
});
export type TaskStage = InferEntity<typeof TaskStage>;
