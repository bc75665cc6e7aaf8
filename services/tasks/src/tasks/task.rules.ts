import { invalidField } from '@svc/platform/errors';
import { type RecurrenceRule, WEEK_DAYS, type WeekDay, weekDayOf } from '../recurrence/recurrence.rule.js';
import { normalizedText, sanitizeDescription, sanitizeMeetingDescription } from './task.html.js';
import { LINK_FIELDS, type RecurrenceBody, type UpdateTaskBody } from './task.schema.js';
import { TASK_COLUMNS, type TaskRow, type TaskStageRow, type TaskTypeRow, type WriteCatalog } from './task.store.js';
import { NATIVE_ORIGIN } from './task.view.js';

/**
 * Every rule of the spec's Tasks table that needs no other service, applied to the task as it will be
 * stored: a new one (POST) or the stored one with the fields sent (PUT). Pure; throws `invalid` naming the
 * field. crm's references (responsible, links, tags) are checked afterwards with crm's answer.
 */

export const MEETING_DESCRIPTION_MAX_TEXT = 5000;
const MINUTE_MS = 60_000;

export interface Composed {
  row: TaskRow;
  type: TaskTypeRow;
  stage: TaskStageRow;
  /** The task becomes completed with this write (task.completed fires). */
  completedNow: boolean;
  /** A series starts with this task (POST or PUT with `recurrence`). */
  recurrence: RecurrenceRule | null;
}

export interface ComposeInput {
  id: string;
  companyId: string;
  actorId: string;
  now: Date;
  /** The stored task (PUT), null on POST. */
  current: TaskRow | null;
  body: UpdateTaskBody;
  catalog: WriteCatalog;
}

/** At most one of the six links may be sent; the second one is the field named. */
export function checkOneLink(body: UpdateTaskBody): void {
  const sent = LINK_FIELDS.filter((f) => body[f] !== undefined && body[f] !== null);
  if (sent.length > 1) throw invalidField(`${sent[1]}`, `at most one of ${LINK_FIELDS.join(', ')} may be set (${sent[0]} is set too)`);
}

const unique = <T>(xs: T[]) => [...new Set(xs)];

function blankTask(input: ComposeInput): TaskRow {
  return {
    id: input.id,
    company_id: input.companyId,
    title: '',
    description: null,
    is_personal: false,
    priority: 1,
    task_type_id: '',
    task_stage_id: '',
    crm_lead_id: null,
    crm_deal_id: null,
    crm_delivery_id: null,
    crm_person_id: null,
    crm_organization_id: null,
    crm_customer_id: null,
    responsible_id: input.actorId,
    created_by_id: input.actorId,
    completed_at: null,
    completed_by_id: null,
    start_date: null,
    end_date: null,
    has_time: true,
    meeting_outcome: null,
    meeting_outcome_notes: null,
    meeting_provider: null,
    meeting_mode: null,
    meeting_location: null,
    meeting_description: null,
    meeting_participants: [],
    reminders_minutes: [],
    tag_ids: [],
    parent_task_id: null,
    recurrence_series_id: null,
    recurrence_index: null,
    recurrence_is_exception: false,
    origin: NATIVE_ORIGIN,
    created_at: input.now,
    updated_at: input.now,
  };
}

/**
 * The columns whose change makes an occurrence of a series an exception: every column but identity, stage and
 * completion, authorship, the series bookkeeping and the timestamps (a column added later counts as content).
 */
const NOT_CONTENT: ReadonlySet<keyof TaskRow> = new Set<keyof TaskRow>([
  'id',
  'company_id',
  'task_stage_id',
  'completed_at',
  'completed_by_id',
  'created_by_id',
  'recurrence_series_id',
  'recurrence_index',
  'recurrence_is_exception',
  'origin',
  'created_at',
  'updated_at',
]);
const CONTENT_COLUMNS = TASK_COLUMNS.filter((c) => !NOT_CONTENT.has(c));
const same = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : JSON.stringify(a) === JSON.stringify(b);

export function composeTask(input: ComposeInput): Composed {
  const { body, catalog, current, now } = input;
  checkOneLink(body);
  const type = catalog.type;
  if (!type) throw invalidField('crm_task_type_id', 'task type not found');

  const row: TaskRow = current ? { ...current } : blankTask(input);
  row.task_type_id = type.id;
  if (body.title !== undefined) row.title = body.title;
  if (body.description !== undefined) row.description = body.description === null ? null : sanitizeDescription(body.description);
  if (body.is_personal !== undefined) row.is_personal = body.is_personal;
  if (body.priority !== undefined) row.priority = body.priority;
  if (body.responsible_id !== undefined) row.responsible_id = body.responsible_id;
  if (body.meeting_outcome !== undefined) row.meeting_outcome = body.meeting_outcome;
  if (body.meeting_outcome_notes !== undefined) row.meeting_outcome_notes = body.meeting_outcome_notes || null;
  if (body.meeting_provider !== undefined) row.meeting_provider = body.meeting_provider;
  if (body.meeting_mode !== undefined) row.meeting_mode = body.meeting_mode;
  if (body.meeting_location !== undefined) row.meeting_location = body.meeting_location;
  if (body.meeting_participants !== undefined) row.meeting_participants = unique(body.meeting_participants);
  if (body.reminders_minutes !== undefined) row.reminders_minutes = unique(body.reminders_minutes);
  if (body.tags !== undefined) row.tag_ids = unique(body.tags);
  if (body.parent_task_id !== undefined) row.parent_task_id = body.parent_task_id;
  if (body.meeting_description !== undefined) {
    row.meeting_description = body.meeting_description === null ? null : sanitizeMeetingDescription(body.meeting_description);
    if (row.meeting_description !== null && normalizedText(row.meeting_description).length > MEETING_DESCRIPTION_MAX_TEXT) {
      throw invalidField('meeting_description', `must be at most ${MEETING_DESCRIPTION_MAX_TEXT} characters of text`);
    }
  }

  // A task has one link: the one sent replaces whatever the task pointed at.
  const linkSent = LINK_FIELDS.find((f) => body[f] !== undefined && body[f] !== null);
  for (const f of LINK_FIELDS) {
    if (linkSent) row[f] = f === linkSent ? (body[f] as string) : null;
    else if (body[f] === null) row[f] = null;
  }

  applyDates(row, body, current, type);
  const linked = (['crm_lead_id', 'crm_deal_id'] as const).find((f) => row[f] !== null);
  if (linked && !row.start_date) throw invalidField(`${linked}`, 'a lead or deal link requires start_date');
  if (row.meeting_outcome !== null && !type.is_meeting) throw invalidField('meeting_outcome', 'only for tasks whose type is a meeting');
  if (row.reminders_minutes.length && (!row.start_date || !row.has_time)) {
    throw invalidField('reminders_minutes', 'only for a task with a start date and time (start_date, has_time true)');
  }
  if (row.meeting_mode === 'in_person' && !row.meeting_location)
    throw invalidField('meeting_location', 'required for an in_person meeting');
  if (row.meeting_mode === 'online' && row.meeting_location) throw invalidField('meeting_location', 'not allowed for an online meeting');

  checkParent(row, input);
  const recurrence = composeRecurrence(row, body, current);
  const { stage, completed } = chooseStage(body, catalog, current);
  row.task_stage_id = stage.id;
  const wasCompleted = current?.completed_at != null;
  let completedNow = false;
  if (completed && !wasCompleted) {
    row.completed_at = now;
    row.completed_by_id = input.actorId;
    completedNow = true;
  } else if (!completed && wasCompleted) {
    row.completed_at = null;
    row.completed_by_id = null;
  }
  if (current?.recurrence_series_id && CONTENT_COLUMNS.some((c) => !same(current[c], row[c]))) row.recurrence_is_exception = true;
  row.updated_at = now;
  return { row, type, stage, completedNow, recurrence };
}

function applyDates(row: TaskRow, body: UpdateTaskBody, current: TaskRow | null, type: TaskTypeRow): void {
  if (body.has_time !== undefined) row.has_time = body.has_time;
  if (body.end_date && !row.has_time) throw invalidField('end_date', 'not accepted for a whole-day task (has_time false)');
  if (body.start_date !== undefined) row.start_date = body.start_date?.at ?? null;
  const start = row.start_date;
  if (!row.has_time) row.end_date = null;
  else if (body.end_date !== undefined) row.end_date = body.end_date?.at ?? null;
  else if (!start) row.end_date = null;
  else if (current?.start_date && current.end_date && current.has_time) {
    // A moved task keeps its duration.
    row.end_date = new Date(start.getTime() + (current.end_date.getTime() - current.start_date.getTime()));
  } else if (type.default_duration_minutes) row.end_date = new Date(start.getTime() + type.default_duration_minutes * MINUTE_MS);
  else row.end_date = null;
  if (row.end_date && !start) throw invalidField('end_date', 'requires start_date');
  if (row.end_date && start && row.end_date.getTime() < start.getTime()) throw invalidField('end_date', 'must not be before start_date');
}

function checkParent(row: TaskRow, { body, catalog, current }: ComposeInput): void {
  if (!row.parent_task_id) return;
  if (body.recurrence) throw invalidField('recurrence', 'a subtask cannot have its own recurrence');
  if (body.parent_task_id === undefined) return;
  if (row.parent_task_id === row.id) throw invalidField('parent_task_id', 'a task cannot be its own parent');
  const parent = catalog.parent;
  if (!parent) throw invalidField('parent_task_id', 'task not found');
  if (parent.parent_task_id) throw invalidField('parent_task_id', 'a subtask cannot have subtasks');
  if (current && catalog.has_subtasks) throw invalidField('parent_task_id', 'a task with subtasks cannot become a subtask');
  if (row.recurrence_series_id) throw invalidField('parent_task_id', 'a task of a recurring series cannot be a subtask');
}

function composeRecurrence(row: TaskRow, body: UpdateTaskBody, current: TaskRow | null): RecurrenceRule | null {
  const r: RecurrenceBody | null | undefined = body.recurrence;
  if (r === undefined) return null;
  if (current?.recurrence_series_id) {
    throw invalidField(
      'recurrence',
      'the task already belongs to a series; delete the series (DELETE with scope=series) and create it again',
    );
  }
  if (r === null) return null;
  if (!row.start_date) throw invalidField('recurrence', 'requires start_date');
  const offset = body.start_date?.offsetMinutes ?? 0;
  const endType = r.end_type ?? 'none';
  let weekDays: WeekDay[] = [];
  if (r.pattern === 'weekly') {
    const startDay = weekDayOf(row.start_date, offset);
    weekDays = r.week_days ? WEEK_DAYS.filter((d) => r.week_days!.includes(d)) : [startDay];
    if (!weekDays.includes(startDay)) throw invalidField('recurrence.week_days', `must include the day of start_date (${startDay})`);
  } else if (r.week_days) throw invalidField('recurrence.week_days', 'only for the weekly pattern');
  if (endType === 'on_date' && !r.until_date) throw invalidField('recurrence.until_date', 'required when end_type is on_date');
  if (endType !== 'on_date' && r.until_date) throw invalidField('recurrence.until_date', 'only when end_type is on_date');
  if (endType === 'after_occurrences' && !r.occurrences)
    throw invalidField('recurrence.occurrences', 'required when end_type is after_occurrences');
  if (endType !== 'after_occurrences' && r.occurrences)
    throw invalidField('recurrence.occurrences', 'only when end_type is after_occurrences');
  let untilDate: Date | null = null;
  if (r.until_date) {
    // A date alone means the whole of that day at the series' offset.
    untilDate = r.until_date.dateOnly ? new Date(r.until_date.at.getTime() + 86_400_000 - 1 - offset * MINUTE_MS) : r.until_date.at;
    if (untilDate.getTime() < row.start_date.getTime()) throw invalidField('recurrence.until_date', 'must not be before start_date');
  }
  return {
    pattern: r.pattern,
    interval: r.interval ?? 1,
    weekDays,
    endType,
    untilDate,
    occurrences: r.occurrences ?? null,
    utcOffsetMinutes: offset,
  };
}

/**
 * The stage the task will be in and whether it is completed. No stage sent on POST: the first active stage that
 * is not a completion stage. A completion stage completes the task; `completed` (PUT) completes or reopens it,
 * moving it to the first active completion stage, or back to the first open one, when its stage says otherwise.
 */
function chooseStage(body: UpdateTaskBody, catalog: WriteCatalog, current: TaskRow | null): { stage: TaskStageRow; completed: boolean } {
  const sent = body.crm_task_stage_id !== undefined;
  if (sent) {
    const stage = catalog.stage;
    if (!stage) throw invalidField('crm_task_stage_id', 'task stage not found');
    if (!stage.active && stage.id !== current?.task_stage_id) throw invalidField('crm_task_stage_id', 'the task stage is not active');
    if (body.completed === false && stage.is_completion)
      throw invalidField('completed', 'false contradicts crm_task_stage_id, a completion stage');
    return { stage, completed: body.completed ?? stage.is_completion };
  }
  if (!current) {
    const stage = catalog.open_stage;
    if (!stage) throw invalidField('crm_task_stage_id', 'the company has no active task stage that is not a completion stage');
    return { stage, completed: false };
  }
  const stage = catalog.stage!;
  const wasCompleted = current.completed_at !== null;
  if (body.completed === true && !wasCompleted) {
    return { stage: stage.is_completion ? stage : (catalog.completion_stage ?? stage), completed: true };
  }
  if (body.completed === false && wasCompleted) {
    if (!stage.is_completion) return { stage, completed: false };
    if (!catalog.open_stage) throw invalidField('completed', 'the company has no active open task stage to move the task to');
    return { stage: catalog.open_stage, completed: false };
  }
  return { stage, completed: wasCompleted };
}
