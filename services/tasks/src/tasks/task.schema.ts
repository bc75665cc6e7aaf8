import { z } from 'zod';
import { END_TYPES, PATTERNS, WEEK_DAYS } from '../recurrence/recurrence.rule.js';

/** Strict objects: an unknown field is a 400 naming it. Cross-field rules live in task.rules.ts. */

/** A date-time with its offset (Z or ±hh:mm), or a date (midnight UTC); the offset is kept for recurrence. */
export interface When {
  at: Date;
  offsetMinutes: number;
  dateOnly: boolean;
}

const OFFSET_RE = /(Z|[+-]\d{2}:\d{2})$/i;
export const when = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()], { message: 'must be an ISO 8601 date-time (with Z or an offset) or a date' })
  .transform((s): When => {
    const dateOnly = !s.includes('T');
    const m = OFFSET_RE.exec(s);
    let offsetMinutes = 0;
    if (!dateOnly && m && m[1]!.toUpperCase() !== 'Z') {
      const sign = m[1]!.startsWith('-') ? -1 : 1;
      offsetMinutes = sign * (Number(m[1]!.slice(1, 3)) * 60 + Number(m[1]!.slice(4, 6)));
    }
    return { at: new Date(dateOnly ? `${s}T00:00:00Z` : s), offsetMinutes, dateOnly };
  });

// crm answers ids in lower case: ids sent in upper case are the same ids.
const uuid = z.uuid('must be a UUID').transform((s) => s.toLowerCase());
// Postgres text cannot hold NUL: refused in plain text, dropped from HTML (where parsers ignore it anyway).
const text = () => z.string().refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');
const html = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .transform((s) => s.replaceAll('\u0000', ''));

export const LINK_FIELDS = [
  'crm_lead_id',
  'crm_deal_id',
  'crm_delivery_id',
  'crm_person_id',
  'crm_organization_id',
  'crm_customer_id',
] as const;
export type LinkField = (typeof LINK_FIELDS)[number];

export const MEETING_PROVIDERS = ['teams_integration', 'google_calendar_integration'] as const;
export const MEETING_MODES = ['online', 'in_person'] as const;

/**
 * The response's `recurrence` without id, index and flags. Weekly days must include the start date's; monthly falls
 * on the month's last day when shorter; an `until_date` date means the end of that day.
 */
export const recurrenceBody = z.strictObject({
  pattern: z.enum(PATTERNS, { message: `must be one of ${PATTERNS.join(', ')}` }),
  interval: z.number().int().min(1, 'must be an integer from 1 to 365').max(365, 'must be an integer from 1 to 365').optional(),
  week_days: z
    .array(z.enum(WEEK_DAYS, { message: `must be one of ${WEEK_DAYS.join(', ')}` }))
    .min(1, 'must name at least one day')
    .max(7)
    .optional(),
  end_type: z.enum(END_TYPES, { message: `must be one of ${END_TYPES.join(', ')}` }).optional(),
  until_date: when.optional(),
  occurrences: z.number().int().min(1, 'must be an integer from 1 to 1000').max(1000, 'must be an integer from 1 to 1000').optional(),
});
export type RecurrenceBody = z.infer<typeof recurrenceBody>;

const taskFields = {
  crm_task_type_id: uuid,
  title: text().trim().min(1, 'must be 1 to 100 characters').max(100, 'must be 1 to 100 characters'),
  crm_task_stage_id: uuid,
  responsible_id: uuid,
  crm_lead_id: uuid.nullable(),
  crm_deal_id: uuid.nullable(),
  crm_delivery_id: uuid.nullable(),
  crm_person_id: uuid.nullable(),
  crm_organization_id: uuid.nullable(),
  crm_customer_id: uuid.nullable(),
  priority: z.number().int().min(0, 'must be an integer from 0 to 3').max(3, 'must be an integer from 0 to 3'),
  description: html(100_000).nullable(),
  is_personal: z.boolean(),
  start_date: when.nullable(),
  end_date: when.nullable(),
  has_time: z.boolean(),
  meeting_outcome: z.number().int().min(1, 'must be an integer from 1 to 4').max(4, 'must be an integer from 1 to 4').nullable(),
  meeting_outcome_notes: text().trim().max(5000, 'must be at most 5000 characters').nullable(),
  meeting_provider: z.enum(MEETING_PROVIDERS, { message: `must be ${MEETING_PROVIDERS.join(' or ')}` }).nullable(),
  meeting_participants: z
    .array(z.string().trim().toLowerCase().pipe(z.email('must be e-mail addresses')))
    .max(200, 'must have at most 200 addresses'),
  reminders_minutes: z
    .array(
      z
        .number()
        .int('must be integers of at least 1')
        .min(1, 'must be integers of at least 1')
        .max(525_600, 'must be at most 525600 (a year)'),
    )
    .max(20, 'must have at most 20 values'),
  parent_task_id: uuid.nullable(),
  tags: z.array(uuid).max(100, 'must have at most 100 tags'),
  meeting_mode: z.enum(MEETING_MODES, { message: `must be ${MEETING_MODES.join(' or ')}` }).nullable(),
  meeting_location: text().trim().min(1, 'must be 1 to 500 characters').max(500, 'must be 1 to 500 characters').nullable(),
  meeting_description: html(100_000).nullable(),
  recurrence: recurrenceBody.nullable(),
};

export const createTaskBody = z.strictObject({
  ...taskFields,
  crm_task_stage_id: taskFields.crm_task_stage_id.optional(),
  responsible_id: taskFields.responsible_id.optional(),
  crm_lead_id: taskFields.crm_lead_id.optional(),
  crm_deal_id: taskFields.crm_deal_id.optional(),
  crm_delivery_id: taskFields.crm_delivery_id.optional(),
  crm_person_id: taskFields.crm_person_id.optional(),
  crm_organization_id: taskFields.crm_organization_id.optional(),
  crm_customer_id: taskFields.crm_customer_id.optional(),
  priority: taskFields.priority.optional(),
  description: taskFields.description.optional(),
  is_personal: taskFields.is_personal.optional(),
  start_date: taskFields.start_date.optional(),
  end_date: taskFields.end_date.optional(),
  has_time: taskFields.has_time.optional(),
  meeting_outcome: taskFields.meeting_outcome.optional(),
  meeting_outcome_notes: taskFields.meeting_outcome_notes.optional(),
  meeting_provider: taskFields.meeting_provider.optional(),
  meeting_participants: taskFields.meeting_participants.optional(),
  reminders_minutes: taskFields.reminders_minutes.optional(),
  parent_task_id: taskFields.parent_task_id.optional(),
  tags: taskFields.tags.optional(),
  meeting_mode: taskFields.meeting_mode.optional(),
  meeting_location: taskFields.meeting_location.optional(),
  meeting_description: taskFields.meeting_description.optional(),
  recurrence: taskFields.recurrence.optional(),
});
export type CreateTaskBody = z.infer<typeof createTaskBody>;

/** A field sent replaces the stored value, null clears it, an omitted one is kept. */
export const updateTaskBody = createTaskBody.partial().extend({
  crm_task_type_id: uuid.optional(),
  title: taskFields.title.optional(),
  completed: z.boolean().optional(),
});
export type UpdateTaskBody = z.infer<typeof updateTaskBody>;

const queryBool = z.enum(['true', 'false'], { message: 'must be true or false' }).transform((v) => v === 'true');
const queryInt = (fallback: number) =>
  z
    .string()
    .regex(/^-?\d{1,9}$/, 'must be an integer')
    .transform(Number)
    .optional()
    .transform((v) => v ?? fallback);

export const listTasksQuery = z.strictObject({
  crm_lead_id: uuid.optional(),
  crm_deal_id: uuid.optional(),
  crm_delivery_id: uuid.optional(),
  crm_person_id: uuid.optional(),
  crm_organization_id: uuid.optional(),
  crm_customer_id: uuid.optional(),
  responsible_id: uuid.optional(),
  crm_task_type_id: uuid.optional(),
  crm_task_stage_id: uuid.optional(),
  parent_task_id: uuid.optional(),
  recurrence_series_id: uuid.optional(),
  tag_id: uuid.optional(),
  completed: queryBool.optional(),
  date_from: when.optional(),
  date_to: when.optional(),
  hierarchy_mode: z.enum(['flat', 'grouped'], { message: 'must be flat or grouped' }).optional(),
  skip: queryInt(0).transform((v) => Math.max(0, v)),
  take: queryInt(20).transform((v) => Math.min(100, Math.max(1, v))),
  cursor: z.string().max(500).optional(),
});
export type ListTasksQuery = z.infer<typeof listTasksQuery>;

export const deleteTaskQuery = z.strictObject({
  scope: z.enum(['this', 'series'], { message: 'must be this or series' }).optional(),
});
