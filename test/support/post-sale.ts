import { EVENT_KEYS } from '@svc/platform/events/catalog';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import type { Tenant } from './fixtures.js';
import { subscribedStack } from './session.js';
import type { StackOptions } from './stack.js';

/** The DeliverySnapshot fields the spec lists (Delivery payloads). */
export const DELIVERY_SNAPSHOT_FIELDS = [
  'id',
  'code',
  'title',
  'description',
  'status',
  'planned_start_date',
  'planned_end_date',
  'started_at',
  'delivered_at',
  'cancelled_at',
  'cancellation_reason',
  'created_at',
  'updated_at',
  'company_id',
  'pipeline_id',
];

/** A payload without the `changes` every event of a change carries beside the spec's fields (decision 0178). */
export const withoutChanges = ({ changes: _changes, ...rest }: Record<string, unknown>) => rest;

export const eventKeysOf = (group: string) => EVENT_KEYS.filter((k) => k.startsWith(`${group}.`));

/**
 * The record an event is about: the payload itself for `delivery.updated` (a DeliverySnapshot), the link of a
 * satisfaction submission, else the payload's `<kind>` object.
 */
const subjectOf = (key: string, payload: any) => {
  const kind = key.split('.')[0]!;
  if (key === 'delivery.updated') return payload;
  return kind === 'satisfaction' ? payload?.link : payload?.[kind];
};

/**
 * A stack with a tenant whose webhook subscription to `keys` points at a loopback receiver, and the calls a
 * delivery, contract or satisfaction test makes (admin actions under the tenant's company, events waited for).
 */
export async function postSaleStack(keys: string[], options: StackOptions = {}) {
  const { stack, call, admin, receiver, t } = await subscribedStack(keys, options);
  const deliveriesOf = (key: string, id: string) =>
    receiver.received.filter((r) => r.body?.event_key === key && subjectOf(key, r.body.payload)?.id === id);
  return {
    stack,
    call,
    admin,
    receiver,
    t,
    /** An admin call under a company (`/companies/{cid}/<rest>`), the tenant's unless told. */
    act: (method: string, rest: string, body?: unknown, tenant: Pick<Tenant, 'company'> = t) =>
      admin(method, `/companies/${tenant.company.id}/${rest}`, body),
    /** An admin call expected to answer `status` (200 unless told): its body. */
    async ok(method: string, rest: string, body?: unknown, status = 200) {
      const res = await admin(method, `/companies/${t.company.id}/${rest}`, body);
      expect(res.status, res.text).to.equal(status);
      return res.body;
    },
    /** The payload of the `count`th delivery of `key` about record `id`, waited for. */
    async one(key: string, id: string, count = 1) {
      const got = await eventually(() => {
        const list = deliveriesOf(key, id);
        return list.length >= count ? list : undefined;
      }, 15_000);
      return got[count - 1]!.body.payload;
    },
    /** How many deliveries of each key arrived about record `id`. */
    counts: (id: string, group: string) => Object.fromEntries(eventKeysOf(group).map((k) => [k, deliveriesOf(k, id).length])),
    async close() {
      await receiver.close();
      await stack.stop();
    },
  };
}
export type PostSaleStack = Awaited<ReturnType<typeof postSaleStack>>;

/** A 4xx in the spec's error body whose message contains `text`. */
export function expectError(res: { status: number; body: any; text: string }, status: number, text: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.statusCode, res.text).to.equal(status);
  expect(res.body.error).to.be.a('string');
  expect(res.body.message, res.text).to.contain(text);
}
