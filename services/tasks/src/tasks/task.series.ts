import { v7 as uuidv7 } from 'uuid';
import { nextOccurrences, type Occurrence, type RecurrenceRule, ruleFields } from '../recurrence/recurrence.rule.js';
import { insertSeries } from '../recurrence/recurrence.store.js';
import type { Task } from './task.entity.js';
import { type Db, insertTasks, taskOfRow, taskRow } from './task.store.js';

/**
 * Later occurrences copy the first at their own start, in the company's default open stage. A series with an end is
 * created whole, in batches; one without, up to the horizon, and the materializer adds the rest as time passes.
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

/** An endless series' occurrences up to `horizonDays` ahead of now (or of its start, if later). */
export function dueOccurrences(s: SeriesState, now: Date, horizonDays: number, max = MAX_BATCH) {
  const first = s.template.startDate as Date;
  const through = s.rule.endType === 'none' ? new Date(Math.max(now.getTime(), first.getTime()) + horizonDays * DAY_MS) : new Date(8.64e15);
  return nextOccurrences(s.rule, first, { count: s.count, lastStart: s.lastStart }, through, max);
}

/** The template as a series stores it: keyed by column, dates as ISO strings (JSON). */
export const templateOf = (json: Record<string, unknown>): Task => taskOfRow(json);

/** `first` is written too unless already stored; the occurrences returned include it. */
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
