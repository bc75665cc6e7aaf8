import type { ChangeRules } from '@svc/platform/events/changes';
import type { EventPayloads } from '@svc/platform/events/payloads';
import type { RecordIndex } from '../links/crm-records.js';
import type { TaskRead } from './task.store.js';
import { taskSnapshot } from './task.view.js';

/**
 * `task.completed` (payload: decision 0022) fires whenever a task becomes completed (created in or moved to a
 * completion stage, or `completed: true`), again after a reopening. Its `changes` ignore updated_at (decision 0178).
 */
export const TASK_CHANGE_RULES: ChangeRules = { ignore: ['updated_at'] };

export function taskCompletedPayload(r: TaskRead, idx: RecordIndex): EventPayloads['task.completed'] {
  const task = taskSnapshot(r, idx);
  return { task, completed_by: task.completed_by, completed_at: task.completed_at };
}
