import { invalidField } from '@svc/platform/errors';
import { type RecurrenceRule, WEEK_DAYS, type WeekDay, weekDayOf } from '../recurrence/recurrence.rule.js';
import type { Task } from './task.entity.js';
import { normalizedText, sanitizeDescription, sanitizeMeetingDescription } from './task.html.js';
import { LINK_FIELDS, type LinkField, type RecurrenceBody, type UpdateTaskBody } from './task.schema.js';
import { TASK_COLUMNS, type TaskStageSummary, type TaskTypeSummary, type WriteCatalog } from './task.store.js';
import { NATIVE_ORIGIN } from './task.view.js';

/** Pure; throws `invalid` naming the field. crm's references are checked afterwards with crm's answer. */

export const MEETING_DESCRIPTION_MAX_TEXT = 5000;
const MINUTE_MS = 60_000;

export interface Composed {
  row: Task;
  type: TaskTypeSummary;
  stage: TaskStageSummary;
  /** task.completed fires. */
  completedNow: boolean;
  /** A series starts with this task (POST or PUT with `recurrence`). */
  recurrence: RecurrenceRule | null;
}

export interface ComposeInput {
  id: string;
  companyId: string;
  actorId: string;
  now: Date;
  /** Null on POST. */
  current: Task | null;
  body: UpdateTaskBody;
  catalog: WriteCatalog;
}

/** At most one of the six links may be sent; the second one is the field named. */
export function checkOneLink(body: UpdateTaskBody): void {
  const sent = LINK_FIELDS.filter((f) => body[f] !== undefined && body[f] !== null);
  if (sent.length > 1) throw invalidField(`${sent[1]}`, `at most one of ${LINK_FIELDS.join(', ')} may be set (${sent[0]} is set too)`);
}

const unique = <T>(xs: T[]) => [...new Set(xs)];

/** The task's property of each link field of the API. */
export const LINK_PROPERTY = {
  crm_lead_id: 'crmLeadId',
  crm_deal_id: 'crmDealId',
  crm_delivery_id: 'crmDeliveryId',
  crm_person_id: 'crmPersonId',
  crm_organization_id: 'crmOrganizationId',
  crm_customer_id: 'crmCustomerId',
} as const satisfies Record<LinkField, keyof Task>;

function blankTask(input: ComposeInput): Task {
  return {
    id: input.id,
    companyId: input.companyId,
    title: '',
    description: null,
    isPersonal: false,
    priority: 1,
    taskTypeId: '',
    taskStageId: '',
    crmLeadId: null,
    crmDealId: null,
    crmDeliveryId: null,
    crmPersonId: null,
    crmOrganizationId: null,
    crmCustomerId: null,
    responsibleId: input.actorId,
    createdById: input.actorId,
    completedAt: null,
    completedById: null,
    startDate: null,
    endDate: null,
    hasTime: true,
    meetingOutcome: null,
    meetingOutcomeNotes: null,
    meetingProvider: null,
    meetingMode: null,
    meetingLocation: null,
    meetingDescription: null,
    meetingParticipants: [],
    remindersMinutes: [],
    tagIds: [],
    parentTaskId: null,
    recurrenceSeriesId: null,
    recurrenceIndex: null,
    recurrenceIsException: false,
    origin: NATIVE_ORIGIN,
    createdAt: input.now,
    updatedAt: input.now,
  };
}

/** A column added later counts as content, so its change makes an occurrence an exception. */
const NOT_CONTENT: ReadonlySet<keyof Task> = new Set<keyof Task>([
  'id',
  'companyId',
  'taskStageId',
  'completedAt',
  'completedById',
  'createdById',
  'recurrenceSeriesId',
  'recurrenceIndex',
  'recurrenceIsException',
  'origin',
  'createdAt',
  'updatedAt',
]);
const CONTENT_PROPERTIES = TASK_COLUMNS.map((c) => c.property).filter((p) => !NOT_CONTENT.has(p));
const same = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : JSON.stringify(a) === JSON.stringify(b);

export function composeTask(input: ComposeInput): Composed {
  const { body, catalog, current, now } = input;
  checkOneLink(body);
  const type = catalog.type;
  if (!type) throw invalidField('crm_task_type_id', 'task type not found');

  const row: Task = current ? { ...current } : blankTask(input);
  row.taskTypeId = type.id;
  if (body.title !== undefined) row.title = body.title;
  if (body.description !== undefined) row.description = body.description === null ? null : sanitizeDescription(body.description);
  if (body.is_personal !== undefined) row.isPersonal = body.is_personal;
  if (body.priority !== undefined) row.priority = body.priority;
  if (body.responsible_id !== undefined) row.responsibleId = body.responsible_id;
  if (body.meeting_outcome !== undefined) row.meetingOutcome = body.meeting_outcome;
  if (body.meeting_outcome_notes !== undefined) row.meetingOutcomeNotes = body.meeting_outcome_notes || null;
  if (body.meeting_provider !== undefined) row.meetingProvider = body.meeting_provider;
  if (body.meeting_mode !== undefined) row.meetingMode = body.meeting_mode;
  if (body.meeting_location !== undefined) row.meetingLocation = body.meeting_location;
  if (body.meeting_participants !== undefined) row.meetingParticipants = unique(body.meeting_participants);
  if (body.reminders_minutes !== undefined) row.remindersMinutes = unique(body.reminders_minutes);
  if (body.tags !== undefined) row.tagIds = unique(body.tags);
  if (body.parent_task_id !== undefined) row.parentTaskId = body.parent_task_id;
  if (body.meeting_description !== undefined) {
    row.meetingDescription = body.meeting_description === null ? null : sanitizeMeetingDescription(body.meeting_description);
    if (row.meetingDescription != null && normalizedText(row.meetingDescription).length > MEETING_DESCRIPTION_MAX_TEXT) {
      throw invalidField('meeting_description', `must be at most ${MEETING_DESCRIPTION_MAX_TEXT} characters of text`);
    }
  }

  // A task has one link: the one sent replaces whatever the task pointed at.
  const linkSent = LINK_FIELDS.find((f) => body[f] !== undefined && body[f] !== null);
  for (const f of LINK_FIELDS) {
    if (linkSent) row[LINK_PROPERTY[f]] = f === linkSent ? (body[f] as string) : null;
    else if (body[f] === null) row[LINK_PROPERTY[f]] = null;
  }

  applyDates(row, body, current, type);
  const linked = (['crm_lead_id', 'crm_deal_id'] as const).find((f) => row[LINK_PROPERTY[f]] != null);
  if (linked && !row.startDate) throw invalidField(`${linked}`, 'a lead or deal link requires start_date');
  if (row.meetingOutcome != null && !type.isMeeting) throw invalidField('meeting_outcome', 'only for tasks whose type is a meeting');
  if (row.remindersMinutes.length && (!row.startDate || !row.hasTime)) {
    throw invalidField('reminders_minutes', 'only for a task with a start date and time (start_date, has_time true)');
  }
  if (row.meetingMode === 'in_person' && !row.meetingLocation) throw invalidField('meeting_location', 'required for an in_person meeting');
  if (row.meetingMode === 'online' && row.meetingLocation) throw invalidField('meeting_location', 'not allowed for an online meeting');

  checkParent(row, input);
  const recurrence = composeRecurrence(row, body, current);
  const { stage, completed } = chooseStage(body, catalog, current);
  row.taskStageId = stage.id;
  const wasCompleted = current?.completedAt != null;
  let completedNow = false;
  if (completed && !wasCompleted) {
    row.completedAt = now;
    row.completedById = input.actorId;
    completedNow = true;
  } else if (!completed && wasCompleted) {
    row.completedAt = null;
    row.completedById = null;
  }
  if (current?.recurrenceSeriesId && CONTENT_PROPERTIES.some((p) => !same(current[p], row[p]))) row.recurrenceIsException = true;
  row.updatedAt = now;
  return { row, type, stage, completedNow, recurrence };
}

function applyDates(row: Task, body: UpdateTaskBody, current: Task | null, type: TaskTypeSummary): void {
  if (body.has_time !== undefined) row.hasTime = body.has_time;
  if (body.end_date && !row.hasTime) throw invalidField('end_date', 'not accepted for a whole-day task (has_time false)');
  if (body.start_date !== undefined) row.startDate = body.start_date?.at ?? null;
  const start = row.startDate;
  if (!row.hasTime) row.endDate = null;
  else if (body.end_date !== undefined) row.endDate = body.end_date?.at ?? null;
  else if (!start) row.endDate = null;
  else if (current?.startDate && current.endDate && current.hasTime) {
    // A moved task keeps its duration.
    row.endDate = new Date(start.getTime() + (current.endDate.getTime() - current.startDate.getTime()));
  } else if (type.defaultDurationMinutes) row.endDate = new Date(start.getTime() + type.defaultDurationMinutes * MINUTE_MS);
  else row.endDate = null;
  if (row.endDate && !start) throw invalidField('end_date', 'requires start_date');
  if (row.endDate && start && row.endDate.getTime() < start.getTime()) throw invalidField('end_date', 'must not be before start_date');
}

function checkParent(row: Task, { body, catalog, current }: ComposeInput): void {
  if (!row.parentTaskId) return;
  if (body.recurrence) throw invalidField('recurrence', 'a subtask cannot have its own recurrence');
  if (body.parent_task_id === undefined) return;
  if (row.parentTaskId === row.id) throw invalidField('parent_task_id', 'a task cannot be its own parent');
  const parent = catalog.parent;
  if (!parent) throw invalidField('parent_task_id', 'task not found');
  if (parent.parentTaskId) throw invalidField('parent_task_id', 'a subtask cannot have subtasks');
  if (current && catalog.hasSubtasks) throw invalidField('parent_task_id', 'a task with subtasks cannot become a subtask');
  if (row.recurrenceSeriesId) throw invalidField('parent_task_id', 'a task of a recurring series cannot be a subtask');
}

function composeRecurrence(row: Task, body: UpdateTaskBody, current: Task | null): RecurrenceRule | null {
  const r: RecurrenceBody | null | undefined = body.recurrence;
  if (r === undefined) return null;
  if (current?.recurrenceSeriesId) {
    throw invalidField(
      'recurrence',
      'the task already belongs to a series; delete the series (DELETE with scope=series) and create it again',
    );
  }
  if (r === null) return null;
  if (!row.startDate) throw invalidField('recurrence', 'requires start_date');
  const offset = body.start_date?.offsetMinutes ?? 0;
  const endType = r.end_type ?? 'none';
  let weekDays: WeekDay[] = [];
  if (r.pattern === 'weekly') {
    const startDay = weekDayOf(row.startDate, offset);
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
    if (untilDate.getTime() < row.startDate.getTime()) throw invalidField('recurrence.until_date', 'must not be before start_date');
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
 * No stage sent on POST: the first active open stage. `completed` moves the task to the first active completion
 * stage, or back to the first open one, when its stage says otherwise.
 */
function chooseStage(body: UpdateTaskBody, catalog: WriteCatalog, current: Task | null): { stage: TaskStageSummary; completed: boolean } {
  const sent = body.crm_task_stage_id !== undefined;
  if (sent) {
    const stage = catalog.stage;
    if (!stage) throw invalidField('crm_task_stage_id', 'task stage not found');
    if (!stage.active && stage.id !== current?.taskStageId) throw invalidField('crm_task_stage_id', 'the task stage is not active');
    if (body.completed === false && stage.isCompletion)
      throw invalidField('completed', 'false contradicts crm_task_stage_id, a completion stage');
    return { stage, completed: body.completed ?? stage.isCompletion };
  }
  if (!current) {
    const stage = catalog.openStage;
    if (!stage) throw invalidField('crm_task_stage_id', 'the company has no active task stage that is not a completion stage');
    return { stage, completed: false };
  }
  const stage = catalog.stage!;
  const wasCompleted = current.completedAt != null;
  if (body.completed === true && !wasCompleted) {
    return { stage: stage.isCompletion ? stage : (catalog.completionStage ?? stage), completed: true };
  }
  if (body.completed === false && wasCompleted) {
    if (!stage.isCompletion) return { stage, completed: false };
    if (!catalog.openStage) throw invalidField('completed', 'the company has no active open task stage to move the task to');
    return { stage: catalog.openStage, completed: false };
  }
  return { stage, completed: wasCompleted };
}
