import { definedColumns, run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import { TaskRecurrence } from './recurrence.entity.js';

/** Decision 0201. */

type Db = Pool | PoolClient;

const COLUMNS = definedColumns(TaskRecurrence) as { property: Exclude<keyof TaskRecurrence, symbol>; column: string; pgType: string }[];

const insert = statement(
  'task_recurrences_insert',
  `insert into task_recurrences (${COLUMNS.map((c) => c.column).join(', ')})
    values (${COLUMNS.map((c, i) => `$${i + 1}::${c.pgType}`).join(', ')})`,
);

export async function insertSeries(db: Db, series: TaskRecurrence): Promise<void> {
  await run(
    db,
    insert,
    COLUMNS.map((c) => (c.pgType === 'jsonb' ? JSON.stringify(series[c.property]) : series[c.property])),
  );
}

/** A series due for more occurrences, with the company's default open stage (null when it has none). */
export type DueSeries = TaskRecurrence & { openStageId: string | null };

const due = statement(
  'task_recurrences_due',
  `select ${COLUMNS.map((c) => `r.${c.column} as "${c.property}"`).join(', ')},
      (select s.id from task_stages s where s.company_id = r.company_id and s.active and not s.is_completion
        order by s.position, s.id limit 1) as "openStageId"
    from task_recurrences r
    where r.next_start <= $1
    order by r.next_start limit $2 for update of r skip locked`,
);

/** Locked for the transaction; replicas skip them. */
export async function claimDueSeries(db: PoolClient, horizon: Date, limit: number): Promise<DueSeries[]> {
  const rows = await run<Record<string, unknown>>(db, due, [horizon, limit]);
  for (const r of rows)
    for (const c of COLUMNS) {
      const v = r[c.property];
      // The pool under MikroORM hands timestamps over as text.
      if (c.pgType === 'timestamptz' && typeof v === 'string') r[c.property] = new Date(v);
    }
  return rows as DueSeries[];
}

const advance = statement(
  'task_recurrences_advance',
  'update task_recurrences set materialized_count = $2, last_start = $3, next_start = $4 where id = $1',
);

/** `nextStart` null: the end is reached. */
export async function advanceSeries(
  db: Db,
  s: Pick<TaskRecurrence, 'id' | 'materializedCount' | 'lastStart' | 'nextStart'>,
): Promise<void> {
  await run(db, advance, [s.id, s.materializedCount, s.lastStart, s.nextStart]);
}

const remove = statement('task_recurrences_delete', 'delete from task_recurrences where company_id = $1 and id = $2');

export async function deleteSeries(db: Db, companyId: string, id: string): Promise<void> {
  await run(db, remove, [companyId, id]);
}
