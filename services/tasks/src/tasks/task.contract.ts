import { changesSchema } from '@svc/platform/events/changes';
import { type EventContract, event, route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { TASK_CHANGE_RULES } from './task.events.js';
import { createTaskBody, deleteTaskQuery, listTasksQuery, updateTaskBody } from './task.schema.js';

/** Shaped after task.view.ts; the contract test fails when the two drift (decision 0100). */
const uuid = z.string().meta({ format: 'uuid' });
const dateTime = z.string().meta({ format: 'date-time' });
const n = <T extends z.ZodType>(s: T) => s.nullable();
const user = z.object({ id: uuid, name: z.string(), avatar: n(z.string()) }).meta({ id: 'UserSummary' });
const empty = z.array(z.never()).meta({ description: 'Always empty here (no source for it yet).' });

const taskFields = {
  id: uuid,
  title: z.string(),
  description: n(z.string()),
  is_personal: z.boolean(),
  priority: n(z.number().int()),
  start_date: n(dateTime),
  end_date: n(dateTime),
  completed_at: n(dateTime),
  created_at: dateTime,
  updated_at: dateTime,
  has_time: z.boolean(),
  meeting_outcome: n(z.number().int()),
  meeting_outcome_notes: n(z.string()),
  ai_processed: z.boolean(),
  ai_status: z.null(),
  ai_error_log: z.null(),
  ai_last_action: z.null(),
  ai_generated: z.boolean(),
  crm_task_type_id: uuid,
  crm_task_stage_id: uuid,
  crm_lead_id: n(uuid),
  crm_deal_id: n(uuid),
  crm_delivery_id: n(uuid),
  crm_person_id: n(uuid),
  crm_organization_id: n(uuid),
  crm_customer_id: n(uuid),
  responsible_id: uuid,
  parent_task_id: n(uuid),
  recurrence_series_id: n(uuid),
  recurrence_index: n(z.number().int()),
  recurrence_is_exception: z.boolean(),
  is_recurring: z.boolean(),
  recurrence: n(
    z.object({
      id: uuid,
      pattern: z.string(),
      interval: z.number().int(),
      week_days: z.array(z.string()),
      end_type: z.string(),
      start_date: dateTime,
      end_date: n(dateTime),
      until_date: n(dateTime),
      occurrences: n(z.number().int()),
      index: n(z.number().int()),
      is_exception: z.boolean(),
    }),
  ),
  created_by: n(user),
  completed_by: n(user),
  responsible: n(user),
  crm_task_type: z.object({ id: uuid, name: z.string(), icon: n(z.string()), is_meeting: z.boolean() }),
  crm_task_stage: z.object({ id: uuid, name: z.string(), color: n(z.string()), is_completion: z.boolean(), position: z.number().int() }),
  crm_lead: n(z.object({ id: uuid, title: z.string(), code: z.number().int() })),
  crm_deal: n(z.object({ id: uuid, title: z.string(), code: z.number().int() })),
  crm_delivery: n(z.object({ id: uuid, title: z.string(), code: z.number().int(), status: z.number().int() })),
  crm_person: n(z.object({ id: uuid, name: n(z.string()) })),
  crm_organization: n(z.object({ id: uuid, name: z.string(), legal_name: n(z.string()) })),
  crm_customer: n(
    z
      .object({
        id: uuid,
        code: z.number().int(),
        type: z.number().int().meta({ description: '1 person, 2 organization.' }),
        status: z.number().int().meta({ description: '1 active, 2 inactive.' }),
        person: n(z.object({ id: uuid, name: z.string() })),
        organization: n(z.object({ id: uuid, name: z.string(), legal_name: n(z.string()) })),
      })
      .meta({ id: 'CustomerSummary' }),
  ),
  mentions: empty,
  recordings: empty,
  reminders_minutes: z.array(z.number().int()),
  meeting_link: z.null(),
  meeting_location: n(z.string()),
  meeting_description: n(z.string()),
  calendar_event_url: z.null(),
  meeting_participants: z.array(z.string()),
  meeting_provider: n(z.string()),
  provider: n(z.string()),
  meeting_mode: n(z.string()),
  sync_warning: z.null(),
  origin: z.string(),
  is_actionable: z.boolean(),
  hierarchy_level: z.number().int(),
  is_subtask: z.boolean(),
  parent_task: n(z.object({ id: uuid, title: z.string() })),
  tags: z.array(z.object({ id: uuid, name: z.string(), color: n(z.object({ background: n(z.string()), foreground: n(z.string()) })) })),
  calendar_lifecycle_status: z.null(),
  meeting_event: z.null(),
  meeting_sync: z.null(),
  sync: z.null(),
  meeting_attendees: empty,
  attendees: empty,
  meeting_recorder_sessions: empty,
  comments: empty,
};

/** The task as events carry it (task.completed): no fields that depend on who is looking. */
export const taskSnapshotSchema = z.object(taskFields).meta({ id: 'TaskSnapshot' });

const viewerFields = {
  meeting_can_manage_participants: z.boolean(),
  meeting_can_respond: z.boolean(),
  meeting_self_attendee_email: n(z.string()),
  meeting_self_response_status: z.null(),
  meeting_response: z.null(),
};
const subtask = z.object({ ...taskFields, ...viewerFields }).meta({ id: 'Subtask' });
export const taskSchema = z.object({ ...taskFields, ...viewerFields, subtasks: z.array(subtask).optional() }).meta({ id: 'Task' });

const tags = ['Tasks'];
const id = z.object({ id: z.string().meta({ description: 'The task’s UUID.' }) });

export const createTask = route({
  method: 'post',
  path: '/tasks',
  operationId: 'createTask',
  summary: 'Create a task',
  description: 'Creates a task with the key’s creator as the actor; HTML descriptions are sanitized.',
  tags,
  permission: 'crm/task.create',
  body: createTaskBody,
  responses: { 201: { description: 'The task created.', schema: taskSchema } },
});

export const listTasks = route({
  method: 'get',
  path: '/tasks',
  operationId: 'listTasks',
  summary: 'List tasks',
  tags,
  permission: 'crm/task.read',
  query: listTasksQuery,
  responses: {
    200: {
      description: 'A page of tasks.',
      schema: z.object({ total: z.number().int(), records: z.array(taskSchema), next_cursor: n(z.string()) }).meta({ id: 'TaskPage' }),
    },
  },
});

export const getTask = route({
  method: 'get',
  path: '/tasks/{id}',
  operationId: 'getTask',
  summary: 'Get a task',
  tags,
  permission: 'crm/task.read',
  params: id,
  responses: { 200: { description: 'The task with its subtasks.', schema: taskSchema } },
});

export const updateTask = route({
  method: 'put',
  path: '/tasks/{id}',
  operationId: 'updateTask',
  summary: 'Update a task',
  tags,
  permission: 'crm/task.update',
  params: id,
  body: updateTaskBody,
  responses: { 200: { description: 'The task after the update.', schema: taskSchema } },
});

export const deleteTask = route({
  method: 'delete',
  path: '/tasks/{id}',
  operationId: 'deleteTask',
  summary: 'Delete a task',
  description: 'Deletes the task and its subtasks; `scope=series` deletes the whole recurrence series.',
  tags,
  permission: 'crm/task.delete',
  params: id,
  query: deleteTaskQuery,
  responses: {
    200: {
      description: 'The ids deleted.',
      schema: z.object({ id: uuid, deleted_ids: z.array(uuid) }).meta({ id: 'TaskDeletion' }),
    },
  },
});

export const taskEvents: readonly EventContract[] = [
  event({
    key: 'task.completed',
    summary: 'A task became completed (created in, moved to or updated into a completion stage)',
    payload: z
      .object({
        task: taskSnapshotSchema,
        completed_by: n(user),
        completed_at: dateTime,
        // Present when an update completed the task (decision 0178), not on a creation.
        changes: changesSchema(taskSnapshotSchema, TASK_CHANGE_RULES, 'TaskChanges').optional(),
      })
      .meta({ id: 'TaskCompletedPayload' }),
  }),
];
