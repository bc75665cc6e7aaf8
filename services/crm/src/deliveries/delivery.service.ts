import { inTransaction } from '@svc/platform/db/native';
import { conflict, invalidField, notFound } from '@svc/platform/errors';
import { withChanges } from '@svc/platform/events/changes';
import type { NewEvent } from '@svc/platform/events/payloads';
import type { OutboxWriter } from '@svc/platform/events/writer';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { z } from 'zod';
import { requireCompany } from '../companies/company.service.js';
import type { Db, PoolOf } from '../db.js';
import { actingUser, checkLinks, nextCode, refWhere, responsibleUser } from '../records/record.links.js';
import { toDate } from '../records/record.schema.js';
import { userSummary } from '../sales/sales.summaries.js';
import { type Delivery, type DeliveryPipeline, type DeliveryStage, DeliveryStatus } from './delivery.entity.js';
import type {
  CreateDeliveryBody,
  completeDeliveryBody,
  createDeliveryPipelineBody,
  moveDeliveryBody,
  UpdateDeliveryBody,
} from './delivery.schema.js';
import { DELIVERY_CHANGE_RULES, type DeliverySnapshot, deliverySnapshot, deliverySnapshots } from './delivery.snapshot.js';
import * as store from './delivery.store.js';

const STATUS_NAME: Record<number, string> = { 1: 'not started', 2: 'in progress', 3: 'delivered', 4: 'cancelled' };
const isClosed = (d: Delivery) => d.status === DeliveryStatus.DELIVERED || d.status === DeliveryStatus.CANCELLED;

/** Fields of the snapshot a PATCH may change, compared to tell whether anything changed (no change, no event). */
const COMPARED = [
  'title',
  'description',
  'status',
  'responsibleId',
  'dealId',
  'organizationId',
  'personId',
  'plannedStartDate',
  'plannedEndDate',
  'startedAt',
  'cancelledAt',
  'cancellationReason',
] as const;
const same = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : (a ?? null) === (b ?? null);

/** Decision 0080: changes and their events share one transaction; delivered is final, cancelled can reopen. */
export class Deliveries {
  constructor(
    private readonly pool: PoolOf,
    private readonly outbox: OutboxWriter,
  ) {}

  /** A company's first delivery pipeline is its default one; a new default demotes the old. */
  async createPipeline(companyId: string, body: z.infer<typeof createDeliveryPipelineBody>) {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    return inTransaction(pool, async (tx) => {
      await store.lockCompanyPipelines(tx, companyId);
      const hasDefault = await store.hasDefaultPipeline(tx, companyId);
      const isDefault = body.is_default ?? !hasDefault;
      if (isDefault && hasDefault) await store.demoteDefaultPipeline(tx, companyId);
      const pipeline: DeliveryPipeline = { id: uuidv7(), companyId, name: body.name, isDefault, createdAt: new Date() };
      const stages = body.stages.map(
        (s, i): DeliveryStage => ({ id: uuidv7(), companyId, pipelineId: pipeline.id, name: s.name, position: i + 1 }),
      );
      await store.insertPipeline(tx, pipeline, stages);
      return pipelineView(pipeline, stages);
    });
  }

  async listPipelines(companyId: string) {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const { pipelines, stages } = await store.pipelinesWithStages(pool, companyId);
    return pipelines.map((p) =>
      pipelineView(
        p,
        stages.filter((s) => s.pipelineId === p.id),
      ),
    );
  }

  async get(companyId: string, ref: string): Promise<DeliverySnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const d = await store.findDelivery(pool, refWhere(companyId, ref, 'Delivery'));
    if (!d) throw notFound('Delivery');
    return deliverySnapshot(pool, d);
  }

  async list(companyId: string, skip: number, take: number) {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const { records, total } = await store.deliveryPage(pool, companyId, skip, take);
    return { total, records: await deliverySnapshots(pool, companyId, records), next_cursor: null };
  }

  async create(companyId: string, body: CreateDeliveryBody): Promise<DeliverySnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const by = await actingUser(pool, companyId, body.user_id);
    const stage = await this.initialStage(pool, companyId, body.pipeline_id, body.stage_id);
    if (body.responsible_id) await responsibleUser(pool, companyId, body.responsible_id);
    await checkLinks(pool, companyId, body);
    checkPlannedDates(toDate(body.planned_start_date) ?? null, toDate(body.planned_end_date) ?? null);
    return inTransaction(pool, async (tx) => {
      const now = new Date();
      const delivery: Delivery = {
        id: uuidv7(),
        companyId,
        code: await nextCode(tx, companyId, 'delivery'),
        title: body.title,
        description: body.description ?? null,
        status: DeliveryStatus.NOT_STARTED,
        pipelineId: stage.pipelineId,
        stageId: stage.id,
        responsibleId: body.responsible_id ?? by.id,
        createdById: by.id,
        dealId: body.deal_id ?? null,
        organizationId: body.organization_id ?? null,
        personId: body.person_id ?? null,
        plannedStartDate: toDate(body.planned_start_date) ?? null,
        plannedEndDate: toDate(body.planned_end_date) ?? null,
        startedAt: null,
        deliveredAt: null,
        completedById: null,
        cancelledAt: null,
        cancellationReason: null,
        createdAt: now,
        updatedAt: now,
      };
      await store.insertDelivery(tx, delivery);
      const snapshot = await deliverySnapshot(tx, delivery);
      await this.outbox.write(tx, [
        { companyId, eventKey: 'delivery.created', payload: { delivery: snapshot, created_by: userSummary(by) } },
      ]);
      return snapshot;
    });
  }

  /** PATCH: the fields sent change (`null` clears); `delivery.updated` only when something did. */
  async update(companyId: string, ref: string, body: UpdateDeliveryBody): Promise<DeliverySnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    await actingUser(pool, companyId, body.user_id);
    if (body.responsible_id) await responsibleUser(pool, companyId, body.responsible_id);
    await checkLinks(pool, companyId, body);
    return inTransaction(pool, async (tx) => {
      const d = await this.locked(tx, companyId, ref);
      const before = Object.fromEntries(COMPARED.map((k) => [k, d[k]]));
      const was = await deliverySnapshot(tx, d);
      applyUpdate(d, body);
      const changed = COMPARED.some((k) => !same(before[k], d[k]));
      if (!changed) return deliverySnapshot(tx, d);
      d.updatedAt = new Date();
      await store.updateDelivery(tx, d);
      const snapshot = await deliverySnapshot(tx, d);
      await this.recordChange(tx, companyId, was, snapshot, [{ eventKey: 'delivery.updated', payload: snapshot }]);
      return snapshot;
    });
  }

  /** `delivery.stage_changed` `{previous_stage, current_stage, delivery, moved_by}`, then `delivery.updated`. */
  async move(companyId: string, ref: string, body: z.infer<typeof moveDeliveryBody>): Promise<DeliverySnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const by = await actingUser(pool, companyId, body.user_id);
    return inTransaction(pool, async (tx) => {
      const d = await this.locked(tx, companyId, ref);
      const stage = await store.findStage(tx, companyId, body.stage_id);
      if (!stage) throw invalidField('stage_id', 'no such delivery stage in the company');
      if (isClosed(d)) throw conflict(`The delivery is ${STATUS_NAME[d.status]}: it cannot be moved`);
      if (d.stageId === stage.id) return deliverySnapshot(tx, d);
      const was = await deliverySnapshot(tx, d);
      d.stageId = stage.id;
      d.pipelineId = stage.pipelineId;
      d.updatedAt = new Date();
      await store.updateDelivery(tx, d);
      const snapshot = await deliverySnapshot(tx, d);
      await this.recordChange(tx, companyId, was, snapshot, [
        {
          eventKey: 'delivery.stage_changed',
          payload: { previous_stage: was.stage, current_stage: snapshot.stage, delivery: snapshot, moved_by: userSummary(by) },
        },
        { eventKey: 'delivery.updated', payload: snapshot },
      ]);
      return snapshot;
    });
  }

  /** `delivery.completed` `{delivery, completed_by, delivered_at}`, then `delivery.updated`. Final: 409 once done. */
  async complete(companyId: string, ref: string, body: z.infer<typeof completeDeliveryBody>): Promise<DeliverySnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const by = await actingUser(pool, companyId, body.user_id);
    return inTransaction(pool, async (tx) => {
      const d = await this.locked(tx, companyId, ref);
      if (isClosed(d)) throw conflict(`The delivery is ${STATUS_NAME[d.status]}: it cannot be completed`);
      const was = await deliverySnapshot(tx, d);
      const now = new Date();
      d.status = DeliveryStatus.DELIVERED;
      d.deliveredAt = toDate(body.delivered_at) ?? now;
      d.completedById = by.id;
      d.updatedAt = now;
      await store.updateDelivery(tx, d);
      const snapshot = await deliverySnapshot(tx, d);
      await this.recordChange(tx, companyId, was, snapshot, [
        {
          eventKey: 'delivery.completed',
          payload: { delivery: snapshot, completed_by: userSummary(by), delivered_at: snapshot.delivered_at },
        },
        { eventKey: 'delivery.updated', payload: snapshot },
      ]);
      return snapshot;
    });
  }

  /** The events of one change of a delivery, each with `changes` between its snapshots (decision 0178). */
  private async recordChange(tx: PoolClient, companyId: string, before: DeliverySnapshot, after: DeliverySnapshot, events: NewEvent[]) {
    const changed = withChanges(events, before, after, DELIVERY_CHANGE_RULES);
    await this.outbox.write(
      tx,
      changed.map((e) => ({ ...e, companyId })),
    );
  }

  private async locked(tx: PoolClient, companyId: string, ref: string): Promise<Delivery> {
    const d = await store.findDelivery(tx, refWhere(companyId, ref, 'Delivery'), true);
    if (!d) throw notFound('Delivery');
    return d;
  }

  /** `stage_id`, else `pipeline_id`'s first stage, else the default pipeline's first stage. */
  private async initialStage(db: Db, companyId: string, pipelineId?: string, stageId?: string): Promise<DeliveryStage> {
    if (stageId) {
      const stage = await store.findStage(db, companyId, stageId);
      if (!stage) throw invalidField('stage_id', 'no such delivery stage in the company');
      if (pipelineId && stage.pipelineId !== pipelineId) throw invalidField('stage_id', 'not a stage of pipeline_id');
      return stage;
    }
    const pipeline = await store.findPipeline(db, companyId, pipelineId);
    if (!pipeline)
      throw invalidField('pipeline_id', pipelineId ? 'no such delivery pipeline in the company' : 'the company has no delivery pipeline');
    const first = await store.firstStage(db, companyId, pipeline.id);
    if (!first) throw invalidField('pipeline_id', 'the pipeline has no stage');
    return first;
  }
}

export const pipelineView = (p: DeliveryPipeline, stages: DeliveryStage[]) => ({
  id: p.id,
  name: p.name,
  is_default: p.isDefault,
  stages: stages.map((s) => ({ id: s.id, name: s.name, position: s.position })),
});

function checkPlannedDates(start: Date | null, end: Date | null): void {
  if (start && end && end < start) throw invalidField('planned_end_date', 'must not be before planned_start_date');
}

/** Decision 0080: a delivered delivery's status never changes (409); 1 or 2 reopens a cancelled one. */
function applyUpdate(d: Delivery, body: UpdateDeliveryBody): void {
  if (body.title !== undefined) d.title = body.title;
  if (body.description !== undefined) d.description = body.description;
  if (body.responsible_id) d.responsibleId = body.responsible_id;
  if (body.responsible_id === null) throw invalidField('responsible_id', 'a delivery always has a responsible user');
  if (body.deal_id !== undefined) d.dealId = body.deal_id;
  if (body.organization_id !== undefined) d.organizationId = body.organization_id;
  if (body.person_id !== undefined) d.personId = body.person_id;
  if (body.planned_start_date !== undefined) d.plannedStartDate = toDate(body.planned_start_date) ?? null;
  if (body.planned_end_date !== undefined) d.plannedEndDate = toDate(body.planned_end_date) ?? null;
  checkPlannedDates(d.plannedStartDate ?? null, d.plannedEndDate ?? null);
  const now = new Date();
  if (body.status !== undefined && body.status !== d.status) {
    if (d.status === DeliveryStatus.DELIVERED) throw conflict('The delivery is delivered: its status cannot change');
    if (d.status === DeliveryStatus.CANCELLED) {
      d.cancelledAt = null;
      d.cancellationReason = null;
    }
    if (body.status === DeliveryStatus.NOT_STARTED) d.startedAt = null;
    if (body.status === DeliveryStatus.IN_PROGRESS) d.startedAt = d.startedAt ?? now;
    if (body.status === DeliveryStatus.CANCELLED) d.cancelledAt = now;
    d.status = body.status;
  }
  if (body.started_at !== undefined) {
    if (d.status !== DeliveryStatus.IN_PROGRESS && d.status !== DeliveryStatus.DELIVERED)
      throw invalidField('started_at', 'only for a delivery in progress or delivered (send status 2 to start it)');
    d.startedAt = new Date(body.started_at);
  }
  if (body.cancellation_reason !== undefined) {
    if (d.status !== DeliveryStatus.CANCELLED)
      throw invalidField('cancellation_reason', 'only for a cancelled delivery (send status 4 to cancel it)');
    d.cancellationReason = body.cancellation_reason;
  }
}
