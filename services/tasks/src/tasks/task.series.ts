import { v7 as uuidv7 } from 'uuid';
import { nextOccurrences, type Occurrence, type RecurrenceRule, ruleFields } from '../recurrence/recurrence.rule.js';
import { insertSeries } from '../recurrence/recurrence.store.js';
import type { Task } from './task.entity.js';
import { type Db, insertTasks, taskOfRow, taskRow } from './task.store.js';

/**
 * A series is materialized as tasks: the first occurrence is the task created, later ones are copies of it (the
 * template) at their own start, with the same duration, in the company's default open stage. A series with an
 * end (a date or a number of occurrences) is created whole, at most MAX_BATCH occurrences at a time; a series
 * without one up to a horizon ahead of now (RECURRENCE_HORIZON_DAYS). The materializer adds the next ones as
 * time brings them within the horizon, until the end rule is reached.
 */
export const MAX_BATCH = 1000;
const DAY_MS = 86_400_000;

export interface SeriesState {
  id: string;
  companyId: string;
  rule: RecurrenceRule;
  template: Task;
  count: number;
  lastStart: Date;
}

export function occurrenceOf(template: Task, occ: Occurrence, stageId: string, now: Date): Task {
  const start = template.startDate as Date;
  const duration = template.endDate ? template.endDate.getTime() - start.getTime() : null;
  return {
    ...template,
    id: uuidv7(),
    startDate: occ.start,
    endDate: duration === null ? null : new Date(occ.start.getTime() + duration),
    taskStageId: stageId,
    completedAt: null,
    completedById: null,
    recurrenceIndex: occ.index,
    recurrenceIsException: false,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The occurrences due now: all of a series with an end, those of an endless one that start up to `horizonDays`
 * ahead of now (or of the series' start, if later).
 */
export function dueOccurrences(s: SeriesState, now: Date, horizonDays: number, max = MAX_BATCH) {
  const first = s.template.startDate as Date;
  const through = s.rule.endType === 'none' ? new Date(Math.max(now.getTime(), first.getTime()) + horizonDays * DAY_MS) : new Date(8.64e15);
  return nextOccurrences(s.rule, first, { count: s.count, lastStart: s.lastStart }, through, max);
}

/** The template as a series stores it: keyed by column, dates as ISO strings (JSON). */
export const templateOf = (json: Record<string, unknown>): Task => taskOfRow(json);

/**
 * Starts a series with `first` (already numbered 0 and pointing at the series): writes the series row and the
 * occurrences due now, `first` too unless it is already stored. Returns the occurrences, `first` included.
 */
export async function startSeries(
  db: Db,
  first: Task,
  rule: RecurrenceRule,
  openStageId: string,
  now: Date,
  horizonDays: number,
  firstStored = false,
): Promise<Task[]> {
  const template: Task = { ...first, completedAt: null, completedById: null, taskStageId: openStageId };
  const firstStart = first.startDate as Date;
  const state: SeriesState = {
    id: first.recurrenceSeriesId as string,
    companyId: first.companyId,
    rule,
    template,
    count: 1,
    lastStart: firstStart,
  };
  const { occurrences, next } = dueOccurrences(state, now, horizonDays, MAX_BATCH - 1);
  const tasks = [first, ...occurrences.map((o) => occurrenceOf(template, o, openStageId, now))];
  await insertSeries(db, {
    id: state.id,
    companyId: first.companyId,
    ...ruleFields(rule),
    utcOffsetMinutes: rule.utcOffsetMinutes,
    startDate: firstStart,
    endDate: first.endDate ?? null,
    template: taskRow(template),
    materializedCount: tasks.length,
    lastStart: tasks[tasks.length - 1]?.startDate as Date,
    nextStart: next,
    createdAt: now,
  });
  await insertTasks(db, firstStored ? tasks.slice(1) : tasks);
  return tasks;
}
