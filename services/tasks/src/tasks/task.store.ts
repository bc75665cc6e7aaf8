import { definedColumns } from '@svc/platform/db/native';
import type { PoolClient } from 'pg';
import { Task } from './task.entity.js';

/**
 * Task statements, sent with bound parameters straight to the pg pool under the service's MikroORM (same
 * connections, DB_POOL_MAX, search_path `tasks` and broken-client handling): a task is written in one
 * statement and read with its type, stage, parent and series in one, where the ORM would take several round
 * trips and inline every value into the SQL text (services/platform/src/db/native.ts has the pool and transactions).
 */

export type Queryable = Pick<PoolClient, 'query'>;

/** A row of `tasks`, as pg returns it. */
export interface TaskRow {
  id: string;
  company_id: string;
  title: string;
  description: string | null;
  is_personal: boolean;
  priority: number;
  task_type_id: string;
  task_stage_id: string;
  crm_lead_id: string | null;
  crm_deal_id: string | null;
  crm_delivery_id: string | null;
  crm_person_id: string | null;
  crm_organization_id: string | null;
  crm_customer_id: string | null;
  responsible_id: string;
  created_by_id: string;
  completed_at: Date | null;
  completed_by_id: string | null;
  start_date: Date | null;
  end_date: Date | null;
  has_time: boolean;
  meeting_outcome: number | null;
  meeting_outcome_notes: string | null;
  meeting_provider: string | null;
  meeting_mode: string | null;
  meeting_location: string | null;
  meeting_description: string | null;
  meeting_participants: string[];
  reminders_minutes: number[];
  tag_ids: string[];
  parent_task_id: string | null;
  recurrence_series_id: string | null;
  recurrence_index: number | null;
  recurrence_is_exception: boolean;
  origin: string;
  created_at: Date;
  updated_at: Date;
}

export interface TaskTypeRow {
  id: string;
  name: string;
  icon: string | null;
  is_meeting: boolean;
  default_duration_minutes: number | null;
}

export interface TaskStageRow {
  id: string;
  name: string;
  color: string | null;
  is_completion: boolean;
  position: number;
  active: boolean;
}

export interface SeriesRow {
  id: string;
  pattern: string;
  interval: number;
  week_days: string[];
  end_type: string;
  until_date: Date | null;
  occurrences: number | null;
  start_date: Date;
  end_date: Date | null;
}

/** A task with what it is shown with from this service's own tables. */
export interface TaskRead {
  task: TaskRow;
  type: TaskTypeRow;
  stage: TaskStageRow;
  parent: { id: string; title: string } | null;
  series: SeriesRow | null;
}

/** The columns of `tasks`, from the Task entity's definition (test/task.store.test.ts checks them against the ORM's). */
const DEFINED = definedColumns(Task);
export const TASK_COLUMNS = DEFINED.map((c) => c.column as keyof TaskRow);

// Per-row values of a multi-row insert travel as one array per column; the array-valued columns are the same
// for every row of one insert (the occurrences of a series), so they are bound once.
const ARRAYS = new Set<string>(DEFINED.filter((c) => c.pgType.endsWith('[]')).map((c) => c.column));
const PER_ROW: readonly (keyof TaskRow)[] = TASK_COLUMNS.filter((c) => !ARRAYS.has(c));
const PG_TYPE = new Map(DEFINED.map((c) => [c.column, c.pgType]));
/** The Postgres type a column's values are bound as (each per-row column travels as an array of it). */
export const pgTypeOf = (c: keyof TaskRow) => PG_TYPE.get(c) as string;

const INSERT_SQL = (() => {
  const n = PER_ROW.length;
  const unnest = PER_ROW.map((c, i) => `$${i + 1}::${pgTypeOf(c)}[]`).join(', ');
  const arrays = TASK_COLUMNS.filter((c) => ARRAYS.has(c));
  const select = TASK_COLUMNS.map((c) => (ARRAYS.has(c) ? `$${n + 1 + arrays.indexOf(c)}::${pgTypeOf(c)}` : `u.${c}`)).join(', ');
  return `insert into tasks (${TASK_COLUMNS.join(', ')}) select ${select} from unnest(${unnest}) as u(${PER_ROW.join(', ')})`;
})();

/** Inserts tasks that share their array-valued columns (one task, or the occurrences of a series). */
export async function insertTasks(db: Queryable, rows: TaskRow[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const values: unknown[] = PER_ROW.map((c) => rows.map((r) => r[c]));
  for (const c of TASK_COLUMNS) if (ARRAYS.has(c)) values.push(first[c]);
  await db.query({ name: 'tasks_insert', text: INSERT_SQL, values });
}

const UPDATABLE = TASK_COLUMNS.filter((c) => c !== 'id' && c !== 'company_id' && c !== 'created_by_id' && c !== 'created_at');
const UPDATE_SQL = `update tasks set ${UPDATABLE.map((c, i) => `${c} = $${i + 3}`).join(', ')} where company_id = $1 and id = $2`;

export async function updateTask(db: Queryable, row: TaskRow): Promise<void> {
  await db.query({ name: 'tasks_update', text: UPDATE_SQL, values: [row.company_id, row.id, ...UPDATABLE.map((c) => row[c])] });
}

/** The joined read of tasks: `where` is appended (it names `t` for the task). */
export const READ_SELECT = `
select ${TASK_COLUMNS.map((c) => `t.${c}`).join(', ')},
  ty.name as ty_name, ty.icon as ty_icon, ty.is_meeting as ty_is_meeting, ty.default_duration_minutes as ty_default_duration_minutes,
  st.name as st_name, st.color as st_color, st.is_completion as st_is_completion, st.position as st_position, st.active as st_active,
  pt.title as pt_title,
  rs.pattern as rs_pattern, rs.interval as rs_interval, rs.week_days as rs_week_days, rs.end_type as rs_end_type,
  rs.until_date as rs_until_date, rs.occurrences as rs_occurrences, rs.start_date as rs_start_date, rs.end_date as rs_end_date
from tasks t
join task_types ty on ty.id = t.task_type_id
join task_stages st on st.id = t.task_stage_id
left join tasks pt on pt.id = t.parent_task_id
left join task_recurrences rs on rs.id = t.recurrence_series_id`;

type JoinedRow = TaskRow & Record<string, unknown>;

/** The pool is MikroORM's, which has pg hand timestamps over as text: they become Dates here. */
export const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string));
const DATE_COLUMNS = ['completed_at', 'start_date', 'end_date', 'created_at', 'updated_at'] as const;

export function toTaskRead(r: JoinedRow): TaskRead {
  const task = {} as Record<string, unknown>;
  for (const c of TASK_COLUMNS) task[c] = r[c];
  for (const c of DATE_COLUMNS) task[c] = toDate(r[c]);
  return {
    task: task as unknown as TaskRow,
    type: {
      id: r.task_type_id,
      name: r.ty_name as string,
      icon: r.ty_icon as string | null,
      is_meeting: r.ty_is_meeting as boolean,
      default_duration_minutes: r.ty_default_duration_minutes as number | null,
    },
    stage: {
      id: r.task_stage_id,
      name: r.st_name as string,
      color: r.st_color as string | null,
      is_completion: r.st_is_completion as boolean,
      position: r.st_position as number,
      active: r.st_active as boolean,
    },
    parent: r.parent_task_id ? { id: r.parent_task_id, title: r.pt_title as string } : null,
    series: r.recurrence_series_id
      ? {
          id: r.recurrence_series_id,
          pattern: r.rs_pattern as string,
          interval: r.rs_interval as number,
          week_days: r.rs_week_days as string[],
          end_type: r.rs_end_type as string,
          until_date: toDate(r.rs_until_date),
          occurrences: r.rs_occurrences as number | null,
          start_date: toDate(r.rs_start_date)!,
          end_date: toDate(r.rs_end_date),
        }
      : null,
  };
}

/** A task and its subtasks, in the listing's order (the task itself among them). */
export async function readTaskFamily(db: Queryable, companyId: string, id: string): Promise<TaskRead[]> {
  const { rows } = await db.query<JoinedRow>({
    name: 'tasks_read_family',
    text: `${READ_SELECT} where t.company_id = $1 and (t.id = $2 or t.parent_task_id = $2) order by t.start_date asc nulls last, t.id asc`,
    values: [companyId, id],
  });
  return rows.map(toTaskRead);
}

/**
 * Locks a task row for the rest of the transaction; false when the company has no such task. Locked alone, not
 * in the joined read: a row locked through a join is re-checked against the join rows read before the wait, so
 * a concurrent change of its stage would make it vanish. The read that follows sees the latest committed row.
 */
export async function lockTask(db: Queryable, companyId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'tasks_lock',
    text: 'select 1 from tasks where company_id = $1 and id = $2 for update',
    values: [companyId, id],
  });
  return rowCount === 1;
}

/**
 * The catalog rows a write needs, in one round trip: the type, the stage asked for, the default open stage
 * (first active non-completion stage), the first active completion stage, and the parent task.
 */
export interface WriteCatalog {
  type: TaskTypeRow | null;
  stage: TaskStageRow | null;
  open_stage: TaskStageRow | null;
  completion_stage: TaskStageRow | null;
  parent: { id: string; title: string; parent_task_id: string | null; recurrence_series_id: string | null } | null;
  has_subtasks: boolean;
}

const STAGE_JSON = `json_build_object('id', s.id, 'name', s.name, 'color', s.color, 'is_completion', s.is_completion, 'position', s.position, 'active', s.active)`;
const CATALOG_SQL = `
select
  (select json_build_object('id', y.id, 'name', y.name, 'icon', y.icon, 'is_meeting', y.is_meeting,
          'default_duration_minutes', y.default_duration_minutes)
     from task_types y where y.company_id = $1 and y.id = $2) as type,
  (select ${STAGE_JSON} from task_stages s where s.company_id = $1 and s.id = $3) as stage,
  (select ${STAGE_JSON} from task_stages s where s.company_id = $1 and s.active and not s.is_completion
     order by s.position, s.id limit 1) as open_stage,
  (select ${STAGE_JSON} from task_stages s where s.company_id = $1 and s.active and s.is_completion
     order by s.position, s.id limit 1) as completion_stage,
  (select json_build_object('id', p.id, 'title', p.title, 'parent_task_id', p.parent_task_id,
          'recurrence_series_id', p.recurrence_series_id)
     from tasks p where p.company_id = $1 and p.id = $4) as parent,
  exists (select 1 from tasks c where c.parent_task_id = $5) as has_subtasks`;

export async function readWriteCatalog(
  db: Queryable,
  companyId: string,
  ids: { typeId: string; stageId: string | null; parentId: string | null; taskId: string | null },
): Promise<WriteCatalog> {
  const { rows } = await db.query<WriteCatalog>({
    name: 'tasks_write_catalog',
    text: CATALOG_SQL,
    values: [companyId, ids.typeId, ids.stageId, ids.parentId, ids.taskId],
  });
  return rows[0]!;
}
