import { invalidField } from '@svc/platform/errors';
import { type RecordIndex, RecordRefs } from '../links/crm-records.js';
import type { ListTasksQuery } from './task.schema.js';
import { type Db, type ListCursor, listTaskGroups, listTaskPage, type TaskRead } from './task.store.js';
import { addRefsOf, type TaskView, taskView, type Viewer } from './task.view.js';

/**
 * Grouped mode pages the top-level tasks and nests listed subtasks; a subtask whose parent does not match is listed
 * on its own. `total` counts what is paged.
 */

function decodeCursor(raw: string): ListCursor {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as ListCursor;
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

const encodeCursor = (t: { startDate?: Date | null; id: string }) =>
  Buffer.from(JSON.stringify({ s: t.startDate ? t.startDate.toISOString() : null, i: t.id })).toString('base64url');

export type Enrich = (refs: RecordRefs) => Promise<{ idx: RecordIndex; viewer: Viewer }>;

export async function listTasks(
  db: Db,
  actor: { companyId: string },
  q: ListTasksQuery,
  enrich: Enrich,
): Promise<{ total: number; records: TaskView[]; next_cursor: string | null }> {
  const cursor = q.cursor ? decodeCursor(q.cursor) : null;
  const grouped = q.hierarchy_mode === 'grouped';
  const window = { cursor, skip: cursor ? 0 : q.skip, take: q.take };

  let pageReads: TaskRead[];
  let childReads: TaskRead[] = [];
  let total: number;
  let more: boolean;
  if (!grouped) {
    const page = await listTaskPage(db, actor.companyId, q, window);
    more = page.reads.length > q.take;
    pageReads = page.reads.slice(0, q.take);
    total = page.total;
  } else {
    const page = await listTaskGroups(db, actor.companyId, q, window);
    more = page.topIds.length > q.take;
    total = page.total;
    const pageIds = page.topIds.slice(0, q.take);
    const onPage = new Set(pageIds);
    const byId = new Map(page.reads.map((r) => [r.task.id, r]));
    pageReads = pageIds.flatMap((id) => byId.get(id) ?? []);
    childReads = page.reads.filter((r) => !onPage.has(r.task.id));
  }

  const refs = new RecordRefs();
  for (const r of [...pageReads, ...childReads]) addRefsOf(refs, r.task);
  const { idx, viewer } = await enrich(refs);
  const children = new Map<string, TaskView[]>();
  for (const c of childReads) {
    const parentId = c.task.parentTaskId as string;
    const list = children.get(parentId) ?? [];
    list.push(taskView(c, idx, viewer));
    children.set(parentId, list);
  }
  const records = pageReads.map((r) => taskView(r, idx, viewer, grouped ? (children.get(r.task.id) ?? []) : undefined));
  const last = pageReads[pageReads.length - 1];
  return { total, records, next_cursor: more && last ? encodeCursor(last.task) : null };
}
