import { inTransaction } from '@svc/platform/db/native';
import { invalidField, notFound, requireUuid } from '@svc/platform/errors';
import { withChanges } from '@svc/platform/events/changes';
import type { OutboxWriter } from '@svc/platform/events/writer';
import type { CrmPeer } from '@svc/platform/peers/crm';
import type { Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { type CrmRecords, type LinkKind, type RecordIndex, RecordRefs } from '../links/crm-records.js';
import { ruleFields } from '../recurrence/recurrence.rule.js';
import { deleteSeries } from '../recurrence/recurrence.store.js';
import type { Task } from './task.entity.js';
import { TASK_CHANGE_RULES, taskCompletedPayload } from './task.events.js';
import { listTasks } from './task.list.js';
import { type Composed, composeTask } from './task.rules.js';
import { type CreateTaskBody, LINK_FIELDS, type LinkField, type ListTasksQuery, type UpdateTaskBody } from './task.schema.js';
import { startSeries } from './task.series.js';
import {
  deleteSeriesTasks,
  deleteTaskFamily,
  insertTasks,
  lockTask,
  readTaskFamily,
  readWriteCatalog,
  type TaskRead,
  updateTask,
} from './task.store.js';
import { addRefsOf, type TaskView, taskSnapshot, taskView, type Viewer } from './task.view.js';

/** The key's creator, in the key's company, with the key's permissions. */
export interface TaskActor {
  companyId: string;
  userId: string;
  canUpdate: boolean;
}

export interface TaskServiceOptions {
  pool: () => Promise<Pool>;
  crm: CrmPeer;
  records: CrmRecords;
  outbox: OutboxWriter;
  horizonDays: number;
}

const KIND_OF_LINK: Record<LinkField, LinkKind> = {
  crm_lead_id: 'lead',
  crm_deal_id: 'deal',
  crm_delivery_id: 'delivery',
  crm_person_id: 'person',
  crm_organization_id: 'organization',
  crm_customer_id: 'customer',
};

function linkFound(idx: RecordIndex, kind: LinkKind, id: string): boolean {
  switch (kind) {
    case 'lead':
      return idx.leads.has(id);
    case 'deal':
      return idx.deals.has(id);
    case 'delivery':
      return idx.deliveries.has(id);
    case 'person':
      return idx.persons.has(id);
    case 'organization':
      return idx.organizations.has(id);
    case 'customer':
      return idx.customers.has(id);
  }
}

/**
 * Unknown, another company's and hidden records get the same 400, so ids of other companies leak nothing. Stored
 * references not sent again are not checked again.
 */
function checkReferences(body: UpdateTaskBody, idx: RecordIndex): void {
  if (body.responsible_id !== undefined) {
    const u = idx.users.get(body.responsible_id);
    if (!u?.active || u.archived) throw invalidField('responsible_id', 'no active user of the company has this id');
  }
  for (const field of LINK_FIELDS) {
    const id = body[field];
    if (id && !linkFound(idx, KIND_OF_LINK[field], id)) throw invalidField(`${field}`, `${KIND_OF_LINK[field]} not found`);
  }
  for (const tag of body.tags ?? []) if (!idx.tags.has(tag)) throw invalidField('tags', `tag not found: ${tag}`);
}

function refsOfBody(body: UpdateTaskBody, actorId: string): RecordRefs {
  const refs = new RecordRefs().add('user', actorId).add('user', body.responsible_id);
  for (const field of LINK_FIELDS) refs.add(KIND_OF_LINK[field], body[field]);
  for (const tag of body.tags ?? []) refs.add('tag', tag);
  return refs;
}

const viewerOf = (actor: TaskActor, idx: RecordIndex): Viewer => ({
  userId: actor.userId,
  email: idx.users.get(actor.userId)?.email ?? null,
  canUpdate: actor.canUpdate,
});

const readOf = (c: Composed, parent: TaskRead['parent'], series: TaskRead['series']): TaskRead => ({
  task: c.row,
  type: c.type,
  stage: c.stage,
  parent: c.row.parentTaskId ? parent : null,
  series,
});

const parentSummary = (p: { id: string; title: string } | null) => (p ? { id: p.id, title: p.title } : null);

export class TaskService {
  constructor(private readonly o: TaskServiceOptions) {}

  private summaries(actor: TaskActor, refs: RecordRefs): Promise<RecordIndex> {
    return this.o.records.summaries(actor.companyId, actor.userId, refs);
  }

  private completedEvents(reads: TaskRead[], idx: RecordIndex) {
    return reads.map((r) => ({ companyId: r.task.companyId, eventKey: 'task.completed' as const, payload: taskCompletedPayload(r, idx) }));
  }

  async create(actor: TaskActor, body: CreateTaskBody): Promise<TaskView> {
    const pool = await this.o.pool();
    const now = new Date();
    const id = uuidv7();
    const [catalog, idx] = await Promise.all([
      readWriteCatalog(pool, actor.companyId, {
        typeId: body.crm_task_type_id,
        stageId: body.crm_task_stage_id ?? null,
        parentId: body.parent_task_id ?? null,
        taskId: null,
      }),
      this.summaries(actor, refsOfBody(body, actor.userId)),
    ]);
    const composed = composeTask({ id, companyId: actor.companyId, actorId: actor.userId, now, current: null, body, catalog });
    checkReferences(body, idx);
    const first = composed.row;
    let series: TaskRead['series'] = null;
    if (composed.recurrence) {
      first.recurrenceSeriesId = uuidv7();
      first.recurrenceIndex = 0;
      series = this.seriesOf(first, composed);
    }
    const read = readOf(composed, parentSummary(catalog.parent), series);
    if (!composed.recurrence && !composed.completedNow) {
      await insertTasks(pool, [first]);
    } else {
      await inTransaction(pool, async (tx) => {
        if (composed.recurrence) {
          const openStageId = catalog.openStage?.id ?? composed.stage.id;
          await startSeries(tx, first, composed.recurrence, openStageId, now, this.o.horizonDays);
        } else await insertTasks(tx, [first]);
        if (composed.completedNow) await this.o.outbox.write(tx, this.completedEvents([read], idx));
      });
    }
    return taskView(read, idx, viewerOf(actor, idx), []);
  }

  private seriesOf(first: Task, c: Composed): TaskRead['series'] {
    const rule = c.recurrence!;
    return {
      id: first.recurrenceSeriesId!,
      ...ruleFields(rule),
      startDate: first.startDate!,
      endDate: first.endDate,
    };
  }

  /** Another company's id is not found either. */
  async get(actor: TaskActor, id: string): Promise<TaskView> {
    requireUuid(id, 'Task');
    const family = await readTaskFamily(await this.o.pool(), actor.companyId, id);
    return this.detail(actor, id, family);
  }

  private async detail(actor: TaskActor, id: string, family: TaskRead[], idx?: RecordIndex): Promise<TaskView> {
    const self = family.find((r) => r.task.id === id);
    if (!self) throw notFound('Task');
    const subtasks = family.filter((r) => r.task.id !== id);
    if (!idx) {
      const refs = new RecordRefs().add('user', actor.userId);
      for (const r of family) addRefsOf(refs, r.task);
      idx = await this.summaries(actor, refs);
    }
    const viewer = viewerOf(actor, idx);
    return taskView(
      self,
      idx,
      viewer,
      subtasks.map((s) => taskView(s, idx, viewer)),
    );
  }

  async list(actor: TaskActor, query: ListTasksQuery) {
    return listTasks(await this.o.pool(), actor, query, async (refs) => {
      refs.add('user', actor.userId);
      const idx = await this.summaries(actor, refs);
      return { idx, viewer: viewerOf(actor, idx) };
    });
  }

  async update(actor: TaskActor, id: string, body: UpdateTaskBody): Promise<TaskView> {
    requireUuid(id, 'Task');
    const pool = await this.o.pool();
    const now = new Date();
    return inTransaction(pool, async (tx) => {
      // The task is locked for the whole write: two completions at once fire task.completed once.
      if (!(await lockTask(tx, actor.companyId, id))) throw notFound('Task');
      const family = await readTaskFamily(tx, actor.companyId, id);
      const current = family.find((r) => r.task.id === id);
      if (!current) throw notFound('Task');
      const refs = refsOfBody(body, actor.userId);
      for (const r of family) addRefsOf(refs, r.task);
      const [catalog, idx] = await Promise.all([
        readWriteCatalog(tx, actor.companyId, {
          typeId: body.crm_task_type_id ?? current.task.taskTypeId,
          stageId: body.crm_task_stage_id ?? current.task.taskStageId,
          parentId: body.parent_task_id ?? null,
          taskId: id,
        }),
        this.summaries(actor, refs),
      ]);
      const composed = composeTask({ id, companyId: actor.companyId, actorId: actor.userId, now, current: current.task, body, catalog });
      checkReferences(body, idx);
      const row = composed.row;
      let series = current.series;
      if (composed.recurrence) {
        row.recurrenceSeriesId = uuidv7();
        row.recurrenceIndex = 0;
        series = this.seriesOf(row, composed);
      }
      await updateTask(tx, row);
      if (composed.recurrence) {
        await startSeries(tx, row, composed.recurrence, catalog.openStage?.id ?? composed.stage.id, now, this.o.horizonDays, true);
      }
      const parent = body.parent_task_id === undefined ? current.parent : parentSummary(catalog.parent);
      const read = readOf(composed, parent, series);
      if (composed.completedNow) {
        // An update completed it: the event says what the update changed (decision 0178).
        const events = withChanges(
          this.completedEvents([read], idx),
          taskSnapshot(current, idx),
          taskSnapshot(read, idx),
          TASK_CHANGE_RULES,
        );
        await this.o.outbox.write(tx, events);
      }
      const subtasks = family.filter((r) => r.task.id !== id).map((r) => ({ ...r, parent: { id: row.id, title: row.title } }));
      return this.detail(actor, id, [read, ...subtasks], idx);
    });
  }

  /** With scope=series, the whole series too, so no more occurrences are created. */
  async delete(actor: TaskActor, id: string, scope: 'this' | 'series'): Promise<{ id: string; deleted_ids: string[] }> {
    requireUuid(id, 'Task');
    const pool = await this.o.pool();
    return inTransaction(pool, async (tx) => {
      const task = await lockTask(tx, actor.companyId, id);
      if (!task) throw notFound('Task');
      if (scope === 'series' && task.recurrenceSeriesId) {
        const deleted = await deleteSeriesTasks(tx, actor.companyId, task.recurrenceSeriesId);
        await deleteSeries(tx, actor.companyId, task.recurrenceSeriesId);
        return { id, deleted_ids: deleted };
      }
      return { id, deleted_ids: await deleteTaskFamily(tx, actor.companyId, id) };
    });
  }
}
