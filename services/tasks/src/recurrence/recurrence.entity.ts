import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/** Its id is the `recurrence_series_id` of every occurrence. */
export const TaskRecurrence = defineEntity({
  name: 'TaskRecurrence',
  tableName: 'task_recurrences',
  properties: {
    id: p.uuid().primary(),
    companyId: p.uuid(),
    pattern: p.string().length(20),
    interval: p.integer(),
    weekDays: p.array().columnType('text[]'),
    endType: p.string().length(20),
    untilDate: p.datetime().nullable(),
    occurrences: p.integer().nullable(),
    /** The UTC offset of start_date as sent: week days and month days are those of this offset. */
    utcOffsetMinutes: p.integer(),
    /** The first occurrence's start and end: every occurrence keeps its time of day and duration. */
    startDate: p.datetime(),
    endDate: p.datetime().nullable(),
    /** The first occurrence as it was created. */
    template: p.json<Record<string, unknown>>(),
    /** The next occurrence's index, and the start of the last one. */
    materializedCount: p.integer(),
    lastStart: p.datetime(),
    /** The start of the next occurrence to create; null once the end rule is reached. */
    nextStart: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
  indexes: [{ name: 'task_recurrences_next_idx', properties: ['nextStart'], where: 'next_start is not null' }],
});
export type TaskRecurrence = InferEntity<typeof TaskRecurrence>;
