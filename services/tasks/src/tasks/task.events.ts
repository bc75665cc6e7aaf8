import type { ChangeRules } from '@svc/platform/events/changes';
import type { EventPayloads } from '@svc/platform/events/payloads';
import type { RecordIndex } from '../links/crm-records.js';
import type { TaskRead } from './task.store.js';
import { taskSnapshot } from './task.view.js';

/**
 * `task.completed` (the spec names the event, not its payload): `{task, completed_by, completed_at}` where
 * `task` is the Task resource as GET /tasks/{id} shows it, less the fields that depend on who is looking (the
 * meeting_can_* and meeting_self_* eligibility), `completed_by` the UserSummary `{id, name, avatar}` of the
 * user who completed it and `completed_at` the same instant as `task.completed_at`. It fires whenever a task
 * becomes completed: created in a completion stage, moved to one, or updated with `completed: true`; a task
 * reopened and completed again fires it again.
 */
/** `changes` of a task.completed that an update fired: every snapshot field but updated_at (decision 0178). */
export const TASK_CHANGE_RULES: ChangeRules = { ignore: ['updated_at'] };

export function taskCompletedPayload(r: TaskRead, idx: RecordIndex): EventPayloads['task.completed'] {
  const task = taskSnapshot(r, idx);
  return { task, completed_by: task.completed_by, completed_at: task.completed_at };
}
