import { invalidField } from '@svc/platform/errors';
import type { Pool } from 'pg';
import { type RecordIndex, RecordRefs } from '../links/crm-records.js';
import type { ListTasksQuery } from './task.schema.js';
import { READ_SELECT, type TaskRead, toTaskRead } from './task.store.js';
import { addRefsOf, type TaskView, taskView, type Viewer } from './task.view.js';

/**
 * GET /tasks. Order: start_date ascending (tasks without one last), then id. Filters are combined with AND.
 * `hierarchy_mode=grouped` pages the tasks that are not under another listed task and nests under each the
 * listed subtasks (`subtasks`); a subtask whose parent does not match the filters is listed on its own.
 * `total` counts what is paged (all matching tasks, or the top level when grouped). `cursor` (the previous
 * page's `next_cursor`) continues after the last task of that page and replaces `skip`.
 */

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

interface Cursor {
  s: string | null;
  i: string;
}

function decodeCursor(raw: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Cursor;
    if (
      (c.s === null || (typeof c.s === 'string' && !Number.isNaN(Date.parse(c.s)))) &&
      typeof c.i === 'string' &&
      /^[0-9a-f-]{36}$/.test(c.i)
    ) {
      return c;
    }
  } catch {}
  throw invalidField('cursor', 'not a cursor of this listing');
}

const encodeCursor = (r: { start_date: Date | null; id: string }) =>
  Buffer.from(JSON.stringify({ s: r.start_date ? r.start_date.toISOString() : null, i: r.id })).toString('base64url');

/** Rows after the cursor in the order (start_date asc nulls last, id asc), on the alias `a`. */
function afterCursor(a: string, c: Cursor, p: Params): string {
  const id = p.add(c.i);
  if (c.s === null) return `(${a}.start_date is null and ${a}.id > ${id}::uuid)`;
  const s = p.add(c.s);
  return `(${a}.start_date > ${s}::timestamptz or (${a}.start_date = ${s}::timestamptz and ${a}.id > ${id}::uuid) or ${a}.start_date is null)`;
}

const ORDER = (a: string) => `order by ${a}.start_date asc nulls last, ${a}.id asc`;

export type Enrich = (refs: RecordRefs) => Promise<{ idx: RecordIndex; viewer: Viewer }>;

export async function listTasks(
  pool: () => Promise<Pool>,
  actor: { companyId: string },
  q: ListTasksQuery,
  enrich: Enrich,
): Promise<{ total: number; records: TaskView[]; next_cursor: string | null }> {
  const db = await pool();
  const cursor = q.cursor ? decodeCursor(q.cursor) : null;
  const grouped = q.hierarchy_mode === 'grouped';
  const skip = cursor ? 0 : q.skip;

  let pageReads: TaskRead[];
  let childReads: TaskRead[] = [];
  let total: number;
  let more: boolean;
  if (!grouped) {
    const p = new Params();
    const where = filters(actor.companyId, q, p);
    const countP = new Params();
    const [page, count] = await Promise.all([
      db.query(
        `${READ_SELECT} where ${where}${cursor ? ` and ${afterCursor('t', cursor, p)}` : ''} ${ORDER('t')} limit ${p.add(q.take + 1)} offset ${p.add(skip)}`,
        p.values,
      ),
      db.query<{ n: number }>(`select count(*)::int as n from tasks t where ${filters(actor.companyId, q, countP)}`, countP.values),
    ]);
    more = page.rows.length > q.take;
    pageReads = page.rows.slice(0, q.take).map(toTaskRead);
    total = count.rows[0]!.n;
  } else {
    // m: every matching task; top: those whose parent is not among them.
    const p = new Params();
    const top = `with m as (select t.id, t.parent_task_id, t.start_date from tasks t where ${filters(actor.companyId, q, p)}),
      top as (select m.id, m.start_date from m where m.parent_task_id is null or not exists (select 1 from m x where x.id = m.parent_task_id))`;
    const countP = new Params();
    const countTop = `with m as (select t.id, t.parent_task_id from tasks t where ${filters(actor.companyId, q, countP)})
      select count(*)::int as n from m where m.parent_task_id is null or not exists (select 1 from m x where x.id = m.parent_task_id)`;
    const [ids, count] = await Promise.all([
      db.query<{ id: string }>(
        `${top} select top.id from top${cursor ? ` where ${afterCursor('top', cursor, p)}` : ''} ${ORDER('top')} limit ${p.add(q.take + 1)} offset ${p.add(skip)}`,
        p.values,
      ),
      db.query<{ n: number }>(countTop, countP.values),
    ]);
    more = ids.rows.length > q.take;
    const pageIds = ids.rows.slice(0, q.take).map((r) => r.id);
    total = count.rows[0]!.n;
    if (pageIds.length) {
      const rp = new Params();
      const ids = rp.add(pageIds);
      const rows = await db.query(
        `${READ_SELECT} where t.id = any(${ids}::uuid[]) or (t.parent_task_id = any(${ids}::uuid[]) and ${filters(actor.companyId, q, rp)}) ${ORDER('t')}`,
        rp.values,
      );
      const reads = rows.rows.map(toTaskRead);
      const onPage = new Set(pageIds);
      const byId = new Map(reads.map((r) => [r.task.id, r]));
      pageReads = pageIds.map((id) => byId.get(id)!).filter(Boolean);
      childReads = reads.filter((r) => !onPage.has(r.task.id));
    } else pageReads = [];
  }

  const refs = new RecordRefs();
  for (const r of [...pageReads, ...childReads]) addRefsOf(refs, r.task);
  const { idx, viewer } = await enrich(refs);
  const children = new Map<string, TaskView[]>();
  for (const c of childReads) {
    const list = children.get(c.task.parent_task_id!) ?? [];
    list.push(taskView(c, idx, viewer));
    children.set(c.task.parent_task_id!, list);
  }
  const records = pageReads.map((r) => taskView(r, idx, viewer, grouped ? (children.get(r.task.id) ?? []) : undefined));
  const last = pageReads[pageReads.length - 1];
  return { total, records, next_cursor: more && last ? encodeCursor(last.task) : null };
}
