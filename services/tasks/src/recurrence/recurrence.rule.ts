/**
 * Pure, shared by the service and the materializer. Days are those of the series' fixed UTC offset (start_date's):
 * daylight saving time is not followed.
 */
export const WEEK_DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
export type WeekDay = (typeof WEEK_DAYS)[number];
export const PATTERNS = ['every_n_days', 'weekly', 'monthly'] as const;
export type Pattern = (typeof PATTERNS)[number];
export const END_TYPES = ['none', 'on_date', 'after_occurrences'] as const;
export type EndType = (typeof END_TYPES)[number];

export interface RecurrenceRule {
  pattern: Pattern;
  interval: number;
  /** Weekly only: the days, in week order. */
  weekDays: WeekDay[];
  endType: EndType;
  /** on_date: the last instant an occurrence may start. */
  untilDate: Date | null;
  /** after_occurrences: how many occurrences in all. */
  occurrences: number | null;
  utcOffsetMinutes: number;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** Read with getUTC*. */
const local = (at: Date, offset: number) => new Date(at.getTime() + offset * MINUTE_MS);
const fromLocal = (wall: number, offset: number) => new Date(wall - offset * MINUTE_MS);

export const weekDayOf = (at: Date, offset: number): WeekDay => WEEK_DAYS[local(at, offset).getUTCDay()]!;

const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

export function nextStart(rule: RecurrenceRule, first: Date, prev: Date): Date {
  const offset = rule.utcOffsetMinutes;
  switch (rule.pattern) {
    case 'every_n_days':
      return new Date(prev.getTime() + rule.interval * DAY_MS);
    case 'monthly': {
      // The k-th occurrence is k·interval months after the first, on the first's day of the month or the
      // month's last day when it is shorter (31 January, then 28 or 29 February, then 31 March).
      const f = local(first, offset);
      const p = local(prev, offset);
      const k = Math.round((p.getUTCFullYear() * 12 + p.getUTCMonth() - (f.getUTCFullYear() * 12 + f.getUTCMonth())) / rule.interval) + 1;
      const monthIndex = f.getUTCMonth() + k * rule.interval;
      const year = f.getUTCFullYear() + Math.floor(monthIndex / 12);
      const month = ((monthIndex % 12) + 12) % 12;
      const day = Math.min(f.getUTCDate(), daysInMonth(year, month));
      const wall = Date.UTC(year, month, day, f.getUTCHours(), f.getUTCMinutes(), f.getUTCSeconds(), f.getUTCMilliseconds());
      return fromLocal(wall, offset);
    }
    case 'weekly': {
      // Weeks run Sunday to Saturday; the series uses every interval-th week from the first's week.
      const p = local(prev, offset);
      const days = rule.weekDays.map((d) => WEEK_DAYS.indexOf(d)).sort((a, b) => a - b);
      const later = days.find((d) => d > p.getUTCDay());
      const shift = later !== undefined ? later - p.getUTCDay() : 7 * rule.interval - p.getUTCDay() + days[0]!;
      return new Date(prev.getTime() + shift * DAY_MS);
    }
  }
}

export function withinEnd(rule: RecurrenceRule, index: number, start: Date): boolean {
  if (rule.endType === 'after_occurrences') return index < (rule.occurrences ?? 0);
  if (rule.endType === 'on_date') return rule.untilDate !== null && start.getTime() <= rule.untilDate.getTime();
  return true;
}

export interface Occurrence {
  index: number;
  start: Date;
}

/** At most `max` occurrences starting by `through`, and the next start (null once the end rule is reached). */
export function nextOccurrences(
  rule: RecurrenceRule,
  first: Date,
  state: { count: number; lastStart: Date },
  through: Date,
  max: number,
): { occurrences: Occurrence[]; next: Date | null } {
  const occurrences: Occurrence[] = [];
  let prev = state.lastStart;
  let index = state.count;
  for (;;) {
    const start = nextStart(rule, first, prev);
    if (!withinEnd(rule, index, start)) return { occurrences, next: null };
    if (start.getTime() > through.getTime() || occurrences.length >= max) return { occurrences, next: start };
    occurrences.push({ index, start });
    prev = start;
    index++;
  }
}

/** Shared by the series read and the series row. */
export const ruleFields = (rule: RecurrenceRule) => ({
  pattern: rule.pattern,
  interval: rule.interval,
  weekDays: rule.weekDays,
  endType: rule.endType,
  untilDate: rule.untilDate,
  occurrences: rule.occurrences,
});
