import { nativePool } from '@svc/platform/db/native';
import type { Orm } from '@svc/platform/db/orm';
import { type DbDefinition, platformEntities } from '@svc/platform/service';
import { TaskStage, TaskType } from './catalog/catalog.entity.js';
import { migrations } from './migrations/index.js';
import { TaskRecurrence } from './recurrence/recurrence.entity.js';
import { Task } from './tasks/task.entity.js';

export const dbDefinition: DbDefinition = {
  schema: 'tasks',
  entities: [...platformEntities, TaskType, TaskStage, Task, TaskRecurrence],
  migrations,
};

export const poolOf = (orm: Orm) => () => nativePool(orm);
