import { v7 as uuidv7 } from 'uuid';
import type { Queryable, TaskRow } from '../tasks/task.store.js';
import { insertTasks } from '../tasks/task.store.js';
import { nextOccurrences, type Occurrence, type RecurrenceRule } from './recurrence.rule.js';

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
  template: TaskRow;
  count: number;
  lastStart: Date;
}

export function occurrenceRow(template: TaskRow, occ: Occurrence, stageId: string, now: Date): TaskRow {
  const start = template.start_date!;
  const duration = template.end_date ? template.end_date.getTime() - start.getTime() : null;
  return {
    ...template,
    id: uuidv7(),
    start_date: occ.start,
    end_date: duration === null ? null : new Date(occ.start.getTime() + duration),
    task_stage_id: stageId,
    completed_at: null,
    completed_by_id: null,
    recurrence_index: occ.index,
    recurrence_is_exception: false,
    created_at: now,
    updated_at: now,
  };
}

/**
 * The occurrences due now: all of a series with an end, those of an endless one that start up to `horizonDays`
 * ahead of now (or of the series' start, if later).
 */
export function dueOccurrences(s: SeriesState, now: Date, horizonDays: number, max = MAX_BATCH) {
  const through =
    s.rule.endType === 'none'
      ? new Date(Math.max(now.getTime(), s.template.start_date!.getTime()) + horizonDays * DAY_MS)
      : new Date(8.64e15);
  return nextOccurrences(s.rule, s.template.start_date!, { count: s.count, lastStart: s.lastStart }, through, max);
}

/** The template as stored (JSON): dates as ISO strings. */
const templateJson = (t: TaskRow) => JSON.stringify(t);

export function templateFromJson(json: Record<string, unknown>): TaskRow {
  const t = { ...json } as Record<string, unknown>;
  for (const k of ['completed_at', 'start_date', 'end_date', 'created_at', 'updated_at']) t[k] = t[k] ? new Date(t[k] as string) : null;
  return t as unknown as TaskRow;
}

/**
 * Starts a series with `first` (already numbered 0 and pointing at the series): writes the series row and the
 * occurrences due now, `first` too unless it is already stored. Returns the occurrences, `first` included.
 */
export async function startSeries(
  db: Queryable,
  first: TaskRow,
  rule: RecurrenceRule,
  openStageId: string,
  now: Date,
  horizonDays: number,
  firstStored = false,
): Promise<TaskRow[]> {
  const seriesId = first.recurrence_series_id!;
  const template: TaskRow = { ...first, completed_at: null, completed_by_id: null, task_stage_id: openStageId };
  const state: SeriesState = {
    id: seriesId,
    companyId: first.company_id,
    rule,
    template,
    count: 1,
    lastStart: first.start_date!,
  };
  const { occurrences, next } = dueOccurrences(state, now, horizonDays, MAX_BATCH - 1);
  const rows = [first, ...occurrences.map((o) => occurrenceRow(template, o, openStageId, now))];
  const last = rows[rows.length - 1]!;
  await db.query({
    name: 'task_recurrences_insert',
    text: `insert into task_recurrences (id, company_id, pattern, interval, week_days, end_type, until_date, occurrences,
      utc_offset_minutes, start_date, end_date, template, materialized_count, last_start, next_start, created_at)
      values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
    values: [
      seriesId,
      first.company_id,
      rule.pattern,
      rule.interval,
      rule.weekDays,
      rule.endType,
      rule.untilDate,
      rule.occurrences,
      rule.utcOffsetMinutes,
      first.start_date,
      first.end_date,
      templateJson(template),
      rows.length,
      last.start_date,
      next,
      now,
    ],
  });
  await insertTasks(db, firstStored ? rows.slice(1) : rows);
  return rows;
}
