import type { EntityManager } from '@svc/platform/db/orm';
import { invalidField } from '@svc/platform/errors';
import { Delivery } from './delivery.entity.js';

/** A contract's link to a delivery (decision 0081), apart from records' links because records sit below deliveries. */

/** A `delivery_id` sent must name a delivery of the company: an unknown or another company's id is a 400 on it. */
export async function checkDeliveryLink(em: EntityManager, companyId: string, deliveryId: string | null | undefined): Promise<void> {
  if (deliveryId && (await em.count(Delivery, { id: deliveryId, companyId })) === 0) {
    throw invalidField('delivery_id', 'no such delivery in the company');
  }
}

/** The summaries (`{id, code, title, status}`) of the deliveries a set of snapshots point at, in one query. */
export async function deliverySummaries(
  em: EntityManager,
  companyId: string,
  ids: (string | null)[],
): Promise<Map<string, { id: string; code: number; title: string; status: number }>> {
  const present = [...new Set(ids.filter((x): x is string => x !== null))];
  const deliveries = present.length ? await em.find(Delivery, { companyId, id: { $in: present } }) : [];
  return new Map(deliveries.map((d) => [d.id, { id: d.id, code: d.code, title: d.title, status: d.status }]));
}
