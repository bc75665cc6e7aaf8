import type { ChangeRules } from '@svc/platform/events/changes';
import { iso } from '@svc/platform/http/json';
import type { Db } from '../db.js';
import { deliverySummaries } from '../deliveries/delivery.links.js';
import { linkSummaries, summaryOf } from '../records/record.links.js';
import type { Contract } from './contract.entity.js';
import { renewalsOf } from './contract.store.js';

/** A contract date (whole day, stored as midnight UTC) as `YYYY-MM-DD`. */
export const day = (d: Date | null | undefined): string | null => (d ? d.toISOString().slice(0, 10) : null);

/** `changes` of contract events compare every snapshot field but updated_at, which moves with each change (decision 0178). */
export const CONTRACT_CHANGE_RULES: ChangeRules = { ignore: ['updated_at'] };

export type ContractSnapshot = Awaited<ReturnType<typeof contractSnapshot>>;

/** The spec leaves contract payloads open (decision 0081, docs/webhooks/contract-events.md). */
export async function contractSnapshot(db: Db, c: Contract) {
  const renewals = await renewalsOf(db, c.companyId, c.id);
  // One after the other: `db` may be a transaction's client.
  const links = await linkSummaries(db, c.companyId, {
    users: [c.responsibleId, c.createdById, c.canceledById ?? null, c.completedById ?? null, ...renewals.map((r) => r.renewedById)],
    deals: [c.dealId ?? null],
    organizations: [c.organizationId ?? null],
    persons: [c.personId ?? null],
  });
  const deliveries = await deliverySummaries(db, c.companyId, [c.deliveryId ?? null]);
  return {
    id: c.id,
    code: c.code,
    title: c.title,
    description: c.description ?? null,
    status: c.status,
    value: c.value ?? null,
    start_date: day(c.startDate) as string,
    end_date: day(c.endDate),
    company_id: c.companyId,
    deal: summaryOf(links.deals, c.dealId),
    delivery: summaryOf(deliveries, c.deliveryId),
    organization: summaryOf(links.organizations, c.organizationId),
    person: summaryOf(links.persons, c.personId),
    responsible: summaryOf(links.users, c.responsibleId),
    created_by: summaryOf(links.users, c.createdById),
    renewal_count: c.renewalCount,
    last_renewed_at: iso(c.lastRenewedAt),
    renewals: renewals.map((r) => ({
      renewed_at: iso(r.renewedAt) as string,
      renewed_by: summaryOf(links.users, r.renewedById),
      previous_end_date: day(r.previousEndDate) as string,
      new_end_date: day(r.newEndDate) as string,
      previous_value: r.previousValue ?? null,
      new_value: r.newValue ?? null,
    })),
    canceled_at: iso(c.canceledAt),
    canceled_by: summaryOf(links.users, c.canceledById),
    cancellation_reason: c.cancellationReason ?? null,
    completed_at: iso(c.completedAt),
    completed_by: summaryOf(links.users, c.completedById),
    created_at: iso(c.createdAt) as string,
    updated_at: iso(c.updatedAt) as string,
  };
}
