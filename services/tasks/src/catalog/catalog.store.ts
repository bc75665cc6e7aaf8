import { definedColumns, inTransaction, run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import { TaskStage, TaskType } from './catalog.entity.js';

/** Decision 0201. */

type Db = Pool | PoolClient;

function insertOf<E>(name: string, table: string, entity: Parameters<typeof definedColumns>[0]) {
  const columns = definedColumns(entity);
  const st = statement(
    name,
    `insert into ${table} (${columns.map((c) => c.column).join(', ')}) values (${columns.map((c, i) => `$${i + 1}::${c.pgType}`).join(', ')})`,
  );
  return (db: Db, row: E) =>
    run(
      db,
      st,
      columns.map((c) => (row as Record<string, unknown>)[c.property]),
    );
}

const insertType = insertOf<TaskType>('task_types_insert', 'task_types', TaskType);
const insertStage = insertOf<TaskStage>('task_stages_insert', 'task_stages', TaskStage);

export async function insertTaskType(db: Db, type: TaskType): Promise<void> {
  await insertType(db, type);
}

const lockStages = statement('task_stages_lock', `select pg_advisory_xact_lock(hashtext('task-stages:' || $1::text))`);
const lastPosition = statement('task_stages_last_position', 'select max(position) as max from task_stages where company_id = $1');

/** Without a position it goes last; the company's stages are locked so two creations do not take the same one. */
export async function insertTaskStage(pool: Pool, stage: Omit<TaskStage, 'position'> & { position: number | null }): Promise<TaskStage> {
  return inTransaction(pool, async (tx) => {
    await run(tx, lockStages, [stage.companyId]);
    const [last] = await run<{ max: number | null }>(tx, lastPosition, [stage.companyId]);
    const row: TaskStage = { ...stage, position: stage.position ?? (last?.max ?? 0) + 1 };
    await insertStage(tx, row);
    return row;
  });
}
