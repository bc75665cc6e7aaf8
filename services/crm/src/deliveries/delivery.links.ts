import { invalidField } from '@svc/platform/errors';
import type { Db } from '../db.js';
import { type DeliverySummary, deliveryExists, deliverySummaries as summariesOf } from './delivery.store.js';

/** A contract's link to a delivery (decision 0081), apart from records' links because records sit below deliveries. */

/** A `delivery_id` sent must name a delivery of the company: an unknown or another company's id is a 400 on it. */
export async function checkDeliveryLink(db: Db, companyId: string, deliveryId: string | null | undefined): Promise<void> {
  if (deliveryId && !(await deliveryExists(db, companyId, deliveryId))) {
    throw invalidField('delivery_id', 'no such delivery in the company');
  }
}

/** The summaries (`{id, code, title, status}`) of the deliveries a set of snapshots point at, in one query. */
export async function deliverySummaries(db: Db, companyId: string, ids: (string | null)[]): Promise<Map<string, DeliverySummary>> {
  const present = [...new Set(ids.filter((x): x is string => x !== null))];
  const deliveries = await summariesOf(db, companyId, present);
  return new Map(deliveries.map((d) => [d.id, { id: d.id, code: d.code, title: d.title, status: d.status }]));
}
