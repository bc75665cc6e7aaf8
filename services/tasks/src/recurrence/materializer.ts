import { inTransaction } from '@svc/platform/db/native';
import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import { insertTasks, toDate } from '../tasks/task.store.js';
import type { EndType, Pattern, WeekDay } from './recurrence.rule.js';
import { dueOccurrences, MAX_BATCH, occurrenceRow, type SeriesState, templateFromJson } from './series.js';

interface SeriesDbRow {
  id: string;
  company_id: string;
  pattern: Pattern;
  interval: number;
  week_days: WeekDay[];
  end_type: EndType;
  until_date: Date | null;
  occurrences: number | null;
  utc_offset_minutes: number;
  template: Record<string, unknown>;
  materialized_count: number;
  last_start: Date;
  open_stage_id: string | null;
}

const SERIES_BATCH = 50;

/**
 * Adds the occurrences that come within the horizon as time passes, to every series whose end rule is not
 * reached. Replicas share the work (`for update skip locked`); a series whose company has no open stage left
 * is skipped until it has one again.
 */
export class SeriesMaterializer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly pool: () => Promise<Pool>,
    private readonly options: { horizonDays: number; intervalMs: number; logger: Logger },
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.runOnce().catch((err) => this.options.logger.error({ err }, 'recurrence materializer failed'));
      this.timer = setTimeout(() => void this.running.then(tick), this.options.intervalMs);
      this.timer.unref();
    };
    this.timer = setTimeout(tick, Math.min(this.options.intervalMs, 5000));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass over the series that are due at `now`; returns how many occurrences were added. */
  async runOnce(now = new Date()): Promise<number> {
    const horizon = new Date(now.getTime() + this.options.horizonDays * 86_400_000);
    const pool = await this.pool();
    let added = 0;
    for (;;) {
      const batch = await inTransaction(pool, async (client) => {
        const { rows } = await client.query<SeriesDbRow>({
          name: 'task_recurrences_due',
          text: `select r.id, r.company_id, r.pattern, r.interval, r.week_days, r.end_type, r.until_date, r.occurrences,
              r.utc_offset_minutes, r.template, r.materialized_count, r.last_start,
              (select s.id from task_stages s where s.company_id = r.company_id and s.active and not s.is_completion
                order by s.position, s.id limit 1) as open_stage_id
            from task_recurrences r
            where r.next_start <= $1
            order by r.next_start limit $2 for update of r skip locked`,
          values: [horizon, SERIES_BATCH],
        });
        let progressed = 0;
        for (const r of rows) {
          if (!r.open_stage_id) continue;
          const state: SeriesState = {
            id: r.id,
            companyId: r.company_id,
            rule: {
              pattern: r.pattern,
              interval: r.interval,
              weekDays: r.week_days,
              endType: r.end_type,
              untilDate: toDate(r.until_date),
              occurrences: r.occurrences,
              utcOffsetMinutes: r.utc_offset_minutes,
            },
            template: templateFromJson(r.template),
            count: r.materialized_count,
            lastStart: toDate(r.last_start)!,
          };
          const { occurrences, next } = dueOccurrences(state, now, this.options.horizonDays, MAX_BATCH);
          const tasks = occurrences.map((o) => occurrenceRow(state.template, o, r.open_stage_id!, now));
          await insertTasks(client, tasks);
          await client.query({
            name: 'task_recurrences_advance',
            text: `update task_recurrences set materialized_count = $2, last_start = $3, next_start = $4 where id = $1`,
            values: [r.id, r.materialized_count + tasks.length, tasks.length ? tasks[tasks.length - 1]!.start_date : state.lastStart, next],
          });
          added += tasks.length;
          progressed++;
        }
        return { seen: rows.length, progressed };
      });
      // Every series picked is due (its next start is within the horizon), so each pass moves every one it could;
      // stop when a pass moved none (their companies have no open stage) or took the last of them.
      if (batch.seen < SERIES_BATCH || batch.progressed === 0) break;
    }
    return added;
  }
}
