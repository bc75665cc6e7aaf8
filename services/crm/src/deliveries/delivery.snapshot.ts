import type { ChangeRules } from '@svc/platform/events/changes';
import { iso } from '@svc/platform/http/json';
import type { Db } from '../db.js';
import { linkSummaries, summaryOf } from '../records/record.links.js';
import type { StageSummary } from '../sales/sales.summaries.js';
import type { Delivery } from './delivery.entity.js';
import { stagesAndPipelines } from './delivery.store.js';

/** `changes` of delivery events compare every snapshot field but updated_at, which moves with each change (decision 0178). */
export const DELIVERY_CHANGE_RULES: ChangeRules = { ignore: ['updated_at'] };

export type DeliverySnapshot = Awaited<ReturnType<typeof deliverySnapshots>>[number];

/** The spec's fields, then what it leaves open shaped as LeadSnapshot (decision 0080, docs/webhooks/delivery-events.md). */
export async function deliverySnapshots(db: Db, companyId: string, deliveries: Delivery[]) {
  const { stages, pipelines } = await stagesAndPipelines(db, companyId, [...new Set(deliveries.map((d) => d.stageId))]);
  const links = await linkSummaries(db, companyId, {
    users: deliveries.flatMap((d) => [d.responsibleId, d.createdById, d.completedById ?? null]),
    deals: deliveries.map((d) => d.dealId ?? null),
    organizations: deliveries.map((d) => d.organizationId ?? null),
    persons: deliveries.map((d) => d.personId ?? null),
  });
  const stageOf = (id: string): StageSummary | null => {
    const s = stages.find((x) => x.id === id);
    const p = s && pipelines.find((x) => x.id === s.pipelineId);
    return s ? { id: s.id, name: s.name, pipeline: p ? { id: p.id, name: p.name } : null } : null;
  };
  return deliveries.map((d) => ({
    id: d.id,
    code: d.code,
    title: d.title,
    description: d.description ?? null,
    status: d.status,
    planned_start_date: iso(d.plannedStartDate),
    planned_end_date: iso(d.plannedEndDate),
    started_at: iso(d.startedAt),
    delivered_at: iso(d.deliveredAt),
    cancelled_at: iso(d.cancelledAt),
    cancellation_reason: d.cancellationReason ?? null,
    created_at: iso(d.createdAt) as string,
    updated_at: iso(d.updatedAt) as string,
    company_id: d.companyId,
    pipeline_id: d.pipelineId,
    stage_id: d.stageId,
    stage: stageOf(d.stageId),
    responsible: summaryOf(links.users, d.responsibleId),
    created_by: summaryOf(links.users, d.createdById),
    completed_by: summaryOf(links.users, d.completedById),
    deal: summaryOf(links.deals, d.dealId),
    organization: summaryOf(links.organizations, d.organizationId),
    person: summaryOf(links.persons, d.personId),
  }));
}

export async function deliverySnapshot(db: Db, delivery: Delivery): Promise<DeliverySnapshot> {
  const [snapshot] = await deliverySnapshots(db, delivery.companyId, [delivery]);
  return snapshot as DeliverySnapshot;
}
