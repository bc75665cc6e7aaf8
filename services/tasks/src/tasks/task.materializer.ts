import { inTransaction } from '@svc/platform/db/native';
import type { Logger } from '@svc/platform/logging';
import type { Pool } from 'pg';
import type { EndType, Pattern, WeekDay } from '../recurrence/recurrence.rule.js';
import { advanceSeries, claimDueSeries } from '../recurrence/recurrence.store.js';
import { dueOccurrences, MAX_BATCH, occurrenceOf, type SeriesState, templateOf } from './task.series.js';
import { insertTasks } from './task.store.js';

const SERIES_BATCH = 50;

/** Replicas share the work (`for update skip locked`); a company without an open stage is skipped until it has one. */
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

  async runOnce(now = new Date()): Promise<number> {
    const horizon = new Date(now.getTime() + this.options.horizonDays * 86_400_000);
    const pool = await this.pool();
    let added = 0;
    for (;;) {
      const batch = await inTransaction(pool, async (client) => {
        const due = await claimDueSeries(client, horizon, SERIES_BATCH);
        let progressed = 0;
        for (const r of due) {
          if (!r.openStageId) continue;
          const state: SeriesState = {
            id: r.id,
            companyId: r.companyId,
            rule: {
              pattern: r.pattern as Pattern,
              interval: r.interval,
              weekDays: r.weekDays as WeekDay[],
              endType: r.endType as EndType,
              untilDate: r.untilDate ?? null,
              occurrences: r.occurrences ?? null,
              utcOffsetMinutes: r.utcOffsetMinutes,
            },
            template: templateOf(r.template),
            count: r.materializedCount,
            lastStart: r.lastStart,
          };
          const { occurrences, next } = dueOccurrences(state, now, this.options.horizonDays, MAX_BATCH);
          const tasks = occurrences.map((o) => occurrenceOf(state.template, o, r.openStageId as string, now));
          await insertTasks(client, tasks);
          await advanceSeries(client, {
            id: r.id,
            materializedCount: r.materializedCount + tasks.length,
            lastStart: tasks.length ? (tasks[tasks.length - 1]?.startDate as Date) : state.lastStart,
            nextStart: next,
          });
          added += tasks.length;
          progressed++;
        }
        return { seen: due.length, progressed };
      });
      // Every series picked is due, so stop when a pass moved none (no open stage) or took the last of them.
      if (batch.seen < SERIES_BATCH || batch.progressed === 0) break;
    }
    return added;
  }
}
