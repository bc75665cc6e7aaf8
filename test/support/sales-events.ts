import { EVENT_KEYS } from '@svc/platform/events/catalog';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import { client } from './client.js';
import { adminOf, seedTenant } from './fixtures.js';
import { type ReceivedRequest, startReceiver } from './receiver.js';
import { DEAL_SNAPSHOT_FIELDS } from './sales.js';
import { startStack } from './stack.js';

/** The LeadSnapshot fields the spec lists (Lead payloads). */
export const LEAD_SNAPSHOT_FIELDS = [
  'id',
  'code',
  'title',
  'created_at',
  'status',
  'value',
  'valuation',
  'projection_context',
  'measurement_consent',
  'qualification_metric',
  'score',
  'score_criteria_count',
  'score_updated_at',
  'icp',
  'icps',
  'visibility',
  'negotiation_mode',
  'quality_rating',
  'quality_reason',
  'updated_at',
  'archived_at',
  'won_date',
  'lost_date',
  'lost_reason_description',
  'crm_loss_reason',
  'crm_loss_reasons',
  'last_activity_at',
  'responsible',
  'created_by',
  'stage',
  'lead_source',
  'marketing_lead_source',
  'participants',
  'partners',
  'organization',
  'custom_fields',
  'tags',
  'proposals',
  'deals',
  'followers',
  'has_channel_chat',
  'channel_chats',
  'has_whatsapp_chat',
  'whatsapp_chats',
];

/** Every key of the catalog's Lead or Deal group. */
export const salesRecordEvents = (entity: 'lead' | 'deal') => EVENT_KEYS.filter((k) => k.startsWith(`${entity}.`));

/** The StageSummary of stage `index` of a pipeline as the admin API answered it. */
export const stageSummaryOf = (pipeline: { id: string; name: string; stages: { id: string; name: string }[] }, index: number) => ({
  id: pipeline.stages[index]!.id,
  name: pipeline.stages[index]!.name,
  pipeline: { id: pipeline.id, name: pipeline.name },
});

/**
 * The lead.* and deal.* events a receiver got on `path`, by record: `<entity>.updated` carries the snapshot itself,
 * the others carry it under `lead` / `deal`. `one` waits for the `count`-th event of a key and gives its payload.
 */
export function salesEventsOn(received: ReceivedRequest[], path: string) {
  const recordIdOf = (key: string, payload: any) => {
    const [entity, verb] = key.split('.') as [string, string];
    return verb === 'updated' ? payload.id : payload[entity]?.id;
  };
  const of = (recordId: string, key: string) =>
    received.filter((r) => r.path === path && r.body.event_key === key && recordIdOf(key, r.body.payload) === recordId);
  const one = async (recordId: string, key: string, count = 1) => {
    const got = await eventually(() => {
      const list = of(recordId, key);
      return list.length >= count ? list : undefined;
    }, 15_000);
    return got[count - 1]!.body.payload;
  };
  /** The keys received for the record so far, in arrival order. */
  const keys = (recordId: string) =>
    received.filter((r) => r.path === path && recordIdOf(r.body.event_key, r.body.payload) === recordId).map((r) => r.body.event_key);
  return { of, one, keys };
}

/**
 * The set-up of the sales-record event tests: the stack, a tenant (fixtures.seedTenant) whose webhook subscription
 * to `keys` points at a loopback receiver, and the calls those tests make on the tenant's records.
 */
export async function salesEventsStack(keys: string[]) {
  const stack = await startStack();
  const { call } = client(stack.gatewayUrl);
  const admin = adminOf(call, stack.adminToken);
  const receiver = await startReceiver();
  const t = await seedTenant(call, stack.adminToken);
  const path = `/${t.company.id}`;
  const sub = await admin('POST', `/companies/${t.company.id}/webhooks`, { url: receiver.url(path), events: keys });
  expect(sub.status, sub.text).to.equal(201);
  const plural = (entity: Entity) => `${entity}s`;
  const detail = async (entity: Entity, id: string) => {
    const res = await call('GET', `/integrations/external/${plural(entity)}/${id}`, { token: t.key.key });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  return {
    stack,
    call,
    admin,
    receiver,
    t,
    events: salesEventsOn(receiver.received, path),
    /** POST /leads or /deals with the tenant's key (201 expected). */
    async create(entity: Entity, body: Record<string, unknown>) {
      const res = await call('POST', `/integrations/external/${plural(entity)}`, { token: t.key.key, body: { title: 'Evented', ...body } });
      expect(res.status, res.text).to.equal(201);
      return res.body as { id: string; code: number };
    },
    /** An admin call under the tenant's company (`/companies/{cid}/<path>`), or another tenant's. */
    act: (method: string, rest: string, body?: unknown, companyId: string = t.company.id) =>
      admin(method, `/companies/${companyId}/${rest}`, body),
    /** A dedicated action (200 expected): its answer, the record's snapshot. */
    async action(method: string, rest: string, body?: unknown) {
      const res = await admin(method, `/companies/${t.company.id}/${rest}`, body);
      expect(res.status, res.text).to.equal(200);
      return res.body;
    },
    /** GET /leads/{id} or /deals/{id} with the tenant's key (200 expected). */
    detail,
    /** The snapshot part of the detail (what events carry): the detail without its detail-only fields. */
    async snapshotOf(entity: Entity, id: string) {
      const { pipeline_stages: _p, stage_durations: _s, associations_count: _a, views_count: _v, ...snapshot } = await detail(entity, id);
      return snapshot;
    },
    /** A LeadSnapshot / DealSnapshot with every field the spec lists, of record `id`. */
    expectSnapshot(entity: Entity, snapshot: any, id: string) {
      expect(snapshot).to.include.all.keys(...(entity === 'lead' ? LEAD_SNAPSHOT_FIELDS : DEAL_SNAPSHOT_FIELDS));
      expect(snapshot.id).to.equal(id);
    },
    async close() {
      await receiver.close();
      await stack.stop();
    },
  };
}
export type SalesEventsStack = Awaited<ReturnType<typeof salesEventsStack>>;
type Entity = 'lead' | 'deal';
