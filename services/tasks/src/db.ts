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

export { poolOf } from '@svc/platform/db/native';
