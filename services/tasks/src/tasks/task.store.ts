import { type DefinedColumn, definedColumns, run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import { TaskStage, TaskType } from '../catalog/catalog.entity.js';
import { TaskRecurrence } from '../recurrence/recurrence.entity.js';
import { Task } from './task.entity.js';
import type { ListTasksQuery } from './task.schema.js';

/** Decision 0201: a task is written in one statement and read with its type, stage, parent and series in one. */

export type Db = Pool | PoolClient;
type TaskProperty = Exclude<keyof Task, symbol>;

export type TaskTypeSummary = Pick<TaskType, 'id' | 'name' | 'icon' | 'isMeeting' | 'defaultDurationMinutes'>;
export type TaskStageSummary = Pick<TaskStage, 'id' | 'name' | 'color' | 'isCompletion' | 'position' | 'active'>;
export type SeriesSummary = Pick<
  TaskRecurrence,
  'id' | 'pattern' | 'interval' | 'weekDays' | 'endType' | 'untilDate' | 'occurrences' | 'startDate' | 'endDate'
>;

/** A task with what it is shown with from this service's own tables. */
export interface TaskRead {
  task: Task;
  type: TaskTypeSummary;
  stage: TaskStageSummary;
  parent: { id: string; title: string } | null;
  series: SeriesSummary | null;
}

/** test/task-store.test.ts checks them against the ORM's. */
export const TASK_COLUMNS = definedColumns(Task) as (DefinedColumn & { property: TaskProperty })[];
const TYPE_COLUMNS = definedColumns(TaskType).filter((c) => c.property !== 'companyId' && c.property !== 'createdAt');
const STAGE_COLUMNS = definedColumns(TaskStage).filter((c) => c.property !== 'companyId' && c.property !== 'createdAt');
const SERIES_COLUMNS = definedColumns(TaskRecurrence).filter((c) =>
  ['id', 'pattern', 'interval', 'weekDays', 'endType', 'untilDate', 'occurrences', 'startDate', 'endDate'].includes(c.property),
);

/** The pool is MikroORM's, which has pg hand timestamps over as text: they become Dates here. */
export const toDate = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(v as string));

function pick(row: Record<string, unknown>, columns: DefinedColumn[], prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) {
    const v = row[prefix + c.property];
    out[c.property] = c.pgType === 'timestamptz' ? toDate(v) : v;
  }
  return out;
}

const selectAs = (alias: string, columns: DefinedColumn[], prefix = '') =>
  columns.map((c) => `${alias}.${c.column} as "${prefix}${c.property}"`).join(', ');

const jsonOf = (alias: string, columns: DefinedColumn[]) =>
  `json_build_object(${columns.map((c) => `'${c.property}', ${alias}.${c.column}`).join(', ')})`;

/** A task keyed by column names (how a series stores its template), and back. */
export const taskRow = (t: Task): Record<string, unknown> => Object.fromEntries(TASK_COLUMNS.map((c) => [c.column, t[c.property]]));
export function taskOfRow(row: Record<string, unknown>): Task {
  const t: Record<string, unknown> = {};
  for (const c of TASK_COLUMNS) t[c.property] = c.pgType === 'timestamptz' ? toDate(row[c.column]) : row[c.column];
  return t as Task;
}

// Per-row values of a multi-row insert travel as one array per column; the array-valued columns are the same
// for every row of one insert (the occurrences of a series), so they are bound once.
const isArray = (c: DefinedColumn) => c.pgType.endsWith('[]');
const PER_ROW = TASK_COLUMNS.filter((c) => !isArray(c));
const SHARED = TASK_COLUMNS.filter(isArray);

const insert = statement(
  'tasks_insert',
  (() => {
    const unnest = PER_ROW.map((c, i) => `$${i + 1}::${c.pgType}[]`).join(', ');
    const select = TASK_COLUMNS.map((c) => (isArray(c) ? `$${PER_ROW.length + 1 + SHARED.indexOf(c)}::${c.pgType}` : `u.${c.column}`));
    return `insert into tasks (${TASK_COLUMNS.map((c) => c.column).join(', ')}) select ${select.join(', ')}
      from unnest(${unnest}) as u(${PER_ROW.map((c) => c.column).join(', ')})`;
  })(),
);

/** Inserts tasks that share their array-valued columns (one task, or the occurrences of a series). */
export async function insertTasks(db: Db, tasks: Task[]): Promise<void> {
  const first = tasks[0];
  if (!first) return;
  const values: unknown[] = PER_ROW.map((c) => tasks.map((t) => t[c.property]));
  for (const c of SHARED) values.push(first[c.property]);
  await run(db, insert, values);
}

const UPDATABLE = TASK_COLUMNS.filter((c) => !['id', 'companyId', 'createdById', 'createdAt'].includes(c.property));
const update = statement(
  'tasks_update',
  `update tasks set ${UPDATABLE.map((c, i) => `${c.column} = $${i + 3}`).join(', ')} where company_id = $1 and id = $2`,
);

export async function updateTask(db: Db, t: Task): Promise<void> {
  await run(db, update, [t.companyId, t.id, ...UPDATABLE.map((c) => t[c.property])]);
}

/** `where` is appended and names `t` for the task. */
export const READ_SELECT = `
select ${selectAs('t', TASK_COLUMNS)}, ${selectAs('ty', TYPE_COLUMNS, 'type.')}, ${selectAs('st', STAGE_COLUMNS, 'stage.')},
  pt.title as "parent.title", ${selectAs('rs', SERIES_COLUMNS, 'series.')}
from tasks t
join task_types ty on ty.id = t.task_type_id
join task_stages st on st.id = t.task_stage_id
left join tasks pt on pt.id = t.parent_task_id
left join task_recurrences rs on rs.id = t.recurrence_series_id`;

export function toTaskRead(r: Record<string, unknown>): TaskRead {
  const task = pick(r, TASK_COLUMNS) as Task;
  return {
    task,
    type: pick(r, TYPE_COLUMNS, 'type.') as TaskTypeSummary,
    stage: pick(r, STAGE_COLUMNS, 'stage.') as TaskStageSummary,
    parent: task.parentTaskId ? { id: task.parentTaskId, title: r['parent.title'] as string } : null,
    series: task.recurrenceSeriesId ? (pick(r, SERIES_COLUMNS, 'series.') as SeriesSummary) : null,
  };
}

const readFamily = statement(
  'tasks_read_family',
  `${READ_SELECT} where t.company_id = $1 and (t.id = $2 or t.parent_task_id = $2) order by t.start_date asc nulls last, t.id asc`,
);

/** A task and its subtasks, in the listing's order (the task itself among them). */
export async function readTaskFamily(db: Db, companyId: string, id: string): Promise<TaskRead[]> {
  return (await run(db, readFamily, [companyId, id])).map(toTaskRead);
}

const lock = statement(
  'tasks_lock',
  'select recurrence_series_id as "recurrenceSeriesId" from tasks where company_id = $1 and id = $2 for update',
);

/**
 * Locked alone, not in the joined read: a row locked through a join is re-checked against join rows read before
 * the wait, so a concurrent stage change would make it vanish.
 */
export async function lockTask(db: Db, companyId: string, id: string): Promise<Pick<Task, 'recurrenceSeriesId'> | null> {
  return (await run<Pick<Task, 'recurrenceSeriesId'>>(db, lock, [companyId, id]))[0] ?? null;
}

const deleteSeries = statement(
  'tasks_delete_series',
  `delete from tasks where company_id = $1 and (recurrence_series_id = $2
    or parent_task_id in (select id from tasks where company_id = $1 and recurrence_series_id = $2)) returning id`,
);
const deleteFamily = statement(
  'tasks_delete_family',
  'delete from tasks where company_id = $1 and (id = $2 or parent_task_id = $2) returning id',
);

export async function deleteSeriesTasks(db: Db, companyId: string, seriesId: string): Promise<string[]> {
  return (await run<Pick<Task, 'id'>>(db, deleteSeries, [companyId, seriesId])).map((r) => r.id);
}

export async function deleteTaskFamily(db: Db, companyId: string, id: string): Promise<string[]> {
  return (await run<Pick<Task, 'id'>>(db, deleteFamily, [companyId, id])).map((r) => r.id);
}

const countOf = {
  lead: statement('tasks_count_lead', 'select count(*)::int as n from tasks where company_id = $1 and crm_lead_id = $2'),
  deal: statement('tasks_count_deal', 'select count(*)::int as n from tasks where company_id = $1 and crm_deal_id = $2'),
};

export async function countRecordTasks(db: Db, companyId: string, kind: 'lead' | 'deal', recordId: string): Promise<number> {
  return (await run<{ n: number }>(db, countOf[kind], [companyId, recordId]))[0]?.n ?? 0;
}

/** Fetched in one round trip. */
export interface WriteCatalog {
  type: TaskTypeSummary | null;
  stage: TaskStageSummary | null;
  openStage: TaskStageSummary | null;
  completionStage: TaskStageSummary | null;
  parent: Pick<Task, 'id' | 'title' | 'parentTaskId' | 'recurrenceSeriesId'> | null;
  hasSubtasks: boolean;
}

const TYPE_JSON = jsonOf('y', TYPE_COLUMNS);
const STAGE_JSON = jsonOf('s', STAGE_COLUMNS);
const PARENT_JSON = jsonOf(
  'p',
  TASK_COLUMNS.filter((c) => ['id', 'title', 'parentTaskId', 'recurrenceSeriesId'].includes(c.property)),
);
const writeCatalog = statement(
  'tasks_write_catalog',
  `select
  (select ${TYPE_JSON} from task_types y where y.company_id = $1 and y.id = $2) as "type",
  (select ${STAGE_JSON} from task_stages s where s.company_id = $1 and s.id = $3) as "stage",
  (select ${STAGE_JSON} from task_stages s where s.company_id = $1 and s.active and not s.is_completion
     order by s.position, s.id limit 1) as "openStage",
  (select ${STAGE_JSON} from task_stages s where s.company_id = $1 and s.active and s.is_completion
     order by s.position, s.id limit 1) as "completionStage",
  (select ${PARENT_JSON} from tasks p where p.company_id = $1 and p.id = $4) as "parent",
  exists (select 1 from tasks c where c.parent_task_id = $5) as "hasSubtasks"`,
);

export async function readWriteCatalog(
  db: Db,
  companyId: string,
  ids: { typeId: string; stageId: string | null; parentId: string | null; taskId: string | null },
): Promise<WriteCatalog> {
  const [row] = await run<WriteCatalog>(db, writeCatalog, [companyId, ids.typeId, ids.stageId, ids.parentId, ids.taskId]);
  return row as WriteCatalog;
}

/** A position in the listing's order: after the task with this start (null: none) and id. */
export interface ListCursor {
  s: string | null;
  i: string;
}

class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

const DAY_MS = 86_400_000;

function filters(companyId: string, q: ListTasksQuery, p: Params): string {
  const where = [`t.company_id = ${p.add(companyId)}`];
  const eq = (column: string, value: string | undefined) => {
    if (value) where.push(`t.${column} = ${p.add(value)}`);
  };
  eq('crm_lead_id', q.crm_lead_id);
  eq('crm_deal_id', q.crm_deal_id);
  eq('crm_delivery_id', q.crm_delivery_id);
  eq('crm_person_id', q.crm_person_id);
  eq('crm_organization_id', q.crm_organization_id);
  eq('crm_customer_id', q.crm_customer_id);
  eq('responsible_id', q.responsible_id);
  eq('task_type_id', q.crm_task_type_id);
  eq('task_stage_id', q.crm_task_stage_id);
  eq('parent_task_id', q.parent_task_id);
  eq('recurrence_series_id', q.recurrence_series_id);
  if (q.tag_id) where.push(`t.tag_ids @> array[${p.add(q.tag_id)}]::uuid[]`);
  if (q.completed !== undefined) where.push(`t.completed_at is ${q.completed ? 'not ' : ''}null`);
  // date_from and date_to bound start_date, both inclusive; a date alone is its whole day (UTC).
  if (q.date_from) where.push(`t.start_date >= ${p.add(q.date_from.at)}`);
  if (q.date_to) where.push(`t.start_date <= ${p.add(q.date_to.dateOnly ? new Date(q.date_to.at.getTime() + DAY_MS - 1) : q.date_to.at)}`);
  return where.join(' and ');
}

/** Rows after the cursor in the order (start_date asc nulls last, id asc), on the alias `a`. */
function afterCursor(a: string, c: ListCursor, p: Params): string {
  const id = p.add(c.i);
  if (c.s === null) return `(${a}.start_date is null and ${a}.id > ${id}::uuid)`;
  const s = p.add(c.s);
  return `(${a}.start_date > ${s}::timestamptz or (${a}.start_date = ${s}::timestamptz and ${a}.id > ${id}::uuid) or ${a}.start_date is null)`;
}

const ORDER = (a: string) => `order by ${a}.start_date asc nulls last, ${a}.id asc`;

export interface ListWindow {
  cursor: ListCursor | null;
  skip: number;
  take: number;
}

/** One more than `take` when there are more. */
export async function listTaskPage(
  db: Db,
  companyId: string,
  q: ListTasksQuery,
  w: ListWindow,
): Promise<{ reads: TaskRead[]; total: number }> {
  const p = new Params();
  const where = filters(companyId, q, p);
  const countP = new Params();
  const [page, count] = await Promise.all([
    db.query(
      `${READ_SELECT} where ${where}${w.cursor ? ` and ${afterCursor('t', w.cursor, p)}` : ''} ${ORDER('t')} limit ${p.add(w.take + 1)} offset ${p.add(w.skip)}`,
      p.values,
    ),
    db.query<{ n: number }>(`select count(*)::int as n from tasks t where ${filters(companyId, q, countP)}`, countP.values),
  ]);
  return { reads: page.rows.map(toTaskRead), total: (count.rows[0] as { n: number }).n };
}

/** Top-level tasks are those whose parent does not match; one more than `take` when there are more. */
export async function listTaskGroups(
  db: Db,
  companyId: string,
  q: ListTasksQuery,
  w: ListWindow,
): Promise<{ topIds: string[]; reads: TaskRead[]; total: number }> {
  // m: every matching task; top: those whose parent is not among them.
  const p = new Params();
  const top = `with m as (select t.id, t.parent_task_id, t.start_date from tasks t where ${filters(companyId, q, p)}),
    top as (select m.id, m.start_date from m where m.parent_task_id is null or not exists (select 1 from m x where x.id = m.parent_task_id))`;
  const countP = new Params();
  const countTop = `with m as (select t.id, t.parent_task_id from tasks t where ${filters(companyId, q, countP)})
    select count(*)::int as n from m where m.parent_task_id is null or not exists (select 1 from m x where x.id = m.parent_task_id)`;
  const [ids, count] = await Promise.all([
    db.query<{ id: string }>(
      `${top} select top.id from top${w.cursor ? ` where ${afterCursor('top', w.cursor, p)}` : ''} ${ORDER('top')} limit ${p.add(w.take + 1)} offset ${p.add(w.skip)}`,
      p.values,
    ),
    db.query<{ n: number }>(countTop, countP.values),
  ]);
  const topIds = ids.rows.map((r) => r.id);
  const total = (count.rows[0] as { n: number }).n;
  const pageIds = topIds.slice(0, w.take);
  if (!pageIds.length) return { topIds, reads: [], total };
  const rp = new Params();
  const idList = rp.add(pageIds);
  const rows = await db.query(
    `${READ_SELECT} where t.id = any(${idList}::uuid[]) or (t.parent_task_id = any(${idList}::uuid[]) and ${filters(companyId, q, rp)}) ${ORDER('t')}`,
    rp.values,
  );
  return { topIds, reads: rows.rows.map(toTaskRead), total };
}
