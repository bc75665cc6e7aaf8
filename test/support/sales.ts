import { randomUUID } from 'node:crypto';
import { EVENT_KEYS } from '@svc/platform/events/catalog';
import { eventually } from '@svc/platform/testing';
import { expect } from 'chai';
import type pg from 'pg';
import type { CallResult } from './client.js';
import type { Tenant } from './fixtures.js';
import type { ReceivedRequest } from './receiver.js';

type Call = <T = any>(
  method: string,
  path: string,
  opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<CallResult<T>>;

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

/**
 * DealSnapshot (spec "Deal payloads"): the LeadSnapshot fields with deal_source for lead_source and lead for
 * deals, plus crm_gain_reason(s), won_reason_description, expected_close_date and temperature.
 */
export const DEAL_SNAPSHOT_FIELDS = [
  ...LEAD_SNAPSHOT_FIELDS.map((f) => ({ lead_source: 'deal_source', deals: 'lead' })[f] ?? f),
  'crm_gain_reason',
  'crm_gain_reasons',
  'won_reason_description',
  'expected_close_date',
  'temperature',
];

/** The ten event keys of a kind of sales record (spec "Catalog"). */
export const salesEventKeys = (kind: 'lead' | 'deal') => EVENT_KEYS.filter((k) => k.startsWith(`${kind}.`));

/** The deliveries of event `key` about record `id` a receiver got (`<kind>.updated` is the snapshot itself). */
export function deliveriesOf(receiver: { received: ReceivedRequest[] }, kind: 'lead' | 'deal', id: string, key: string) {
  const idOf = (payload: any) => (key === `${kind}.updated` ? payload?.id : payload?.[kind]?.id);
  return receiver.received.filter((r) => r.body?.event_key === key && idOf(r.body.payload) === id);
}

/** The payload of the `count`th delivery of `key` about record `id`, waited for. */
export async function deliveredPayload(
  receiver: { received: ReceivedRequest[] },
  kind: 'lead' | 'deal',
  id: string,
  key: string,
  count = 1,
) {
  const got = await eventually(() => {
    const list = deliveriesOf(receiver, kind, id, key);
    return list.length >= count ? list : undefined;
  }, 15_000);
  return got[count - 1]!.body.payload;
}

/** The event keys crm's outbox holds about record `id`, in the order they were written. */
export async function outboxKeysOf(db: pg.Client, id: string): Promise<string[]> {
  const { rows } = await db.query(`select event_key from crm.outbox where payload::text like '%' || $1 || '%' order by occurred_at, id`, [
    id,
  ]);
  return rows.map((r) => r.event_key as string);
}

/** A 400 in the spec's error body whose message names `field`. */
export function expect400(res: CallResult, field: string) {
  expect(res.status, res.text).to.equal(400);
  expect(res.body).to.include({ statusCode: 400, error: 'Bad Request' });
  expect(res.body.message, res.text).to.contain(field);
}

export interface CreateOptions {
  tenant?: Tenant;
  /** The x-idempotency-key header. */
  key?: string;
  /** Another integration key than the tenant's. */
  token?: string;
}

/**
 * The external routes of one kind of sales record (`/leads` or `/deals`) as a tenant's key calls them: the raw
 * calls and the checked ones (`created`: 201, `detail`: 200).
 */
export function salesRoutes(call: Call, kind: 'leads' | 'deals', tenant: () => Tenant) {
  const path = `/integrations/external/${kind}`;
  const tokenOf = (opts: CreateOptions) => opts.token ?? (opts.tenant ?? tenant()).key.key;
  const create = (body: unknown, opts: CreateOptions = {}) =>
    call('POST', path, { token: tokenOf(opts), body, headers: opts.key === undefined ? {} : { 'x-idempotency-key': opts.key } });
  const get = (ref: string | number, token = tenant().key.key) => call('GET', `${path}/${ref}`, { token });
  return {
    create,
    get,
    put: (ref: string | number, body: unknown, token = tenant().key.key) => call('PUT', `${path}/${ref}`, { token, body }),
    async created(body: Record<string, unknown>, opts: CreateOptions = {}) {
      const res = await create({ title: 'Record', ...body }, opts);
      expect(res.status, res.text).to.equal(201);
      return res.body as { id: string; code: number; title: string; measurement_consent: string };
    },
    async detail(ref: string | number, token = tenant().key.key) {
      const res = await get(ref, token);
      expect(res.status, res.text).to.equal(200);
      return res.body;
    },
    /** GET of the list with `query` (`?…`): 200 and the `{total, records, next_cursor}` page. */
    async list(query = '', token = tenant().key.key): Promise<{ total: number; records: any[]; next_cursor: string | null }> {
      const res = await call('GET', `${path}${query}`, { token });
      expect(res.status, `${query}: ${res.text}`).to.equal(200);
      expect(res.body).to.have.all.keys('total', 'records', 'next_cursor');
      return res.body;
    },
  };
}

/** Creates reference data through the admin API (201 expected) and returns it. */
export function adminCreator(admin: (method: string, path: string, body?: unknown) => Promise<CallResult>, tenant: () => Tenant) {
  return async (path: string, body: unknown, owner = tenant()) => {
    const res = await admin('POST', `/companies/${owner.company.id}/${path}`, body);
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
}

/**
 * The reference data the lead and deal tests name: tags (one of `other`), persons, organizations, custom fields of
 * `entity` of every kind (a file one too), a follower role and a colleague user.
 */
export async function seedSalesReferences(make: ReturnType<typeof adminCreator>, entity: 'lead' | 'deal', other: Tenant) {
  return {
    hot: await make('tags', { name: 'Hot', color: { background: '#f00', foreground: '#fff' } }),
    cold: await make('tags', { name: 'Cold' }),
    foreignTag: await make('tags', { name: 'Foreign' }, other),
    ana: await make('persons', { name: 'Ana', contacts: [{ type: 1, value: 'ana@example.test' }] }),
    foreignPerson: await make('persons', { name: 'Zed', contacts: [] }, other),
    acme: await make('organizations', { name: 'Acme' }),
    foreignOrg: await make('organizations', { name: 'Foreign Org' }, other),
    size: await make('custom-fields', { entity, name: 'Size', type: 'number' }),
    segment: await make('custom-fields', { entity, name: 'Segment', type: 'select', options: ['SMB', 'Enterprise'] }),
    channels: await make('custom-fields', { entity, name: 'Channels', type: 'multiselect', options: ['Web', 'Phone', 'Store'] }),
    contract: await make('custom-fields', { entity, name: 'Contract', type: 'file' }),
    role: await make('follower-roles', { name: 'Helper' }),
    colleague: await make('users', { name: 'Colleague', email: `colleague-${randomUUID()}@example.test` }),
  };
}

/** The detail of a record linked to seedSalesReferences' tags Hot and Cold, person Ana and organization Acme. */
export function expectSeededRelations(d: any, ref: Record<string, any>) {
  expect(d.tags).to.deep.equal([
    { id: ref.cold.id, name: 'Cold', color: { background: null, foreground: null } },
    { id: ref.hot.id, name: 'Hot', color: { background: '#f00', foreground: '#fff' } },
  ]);
  expect(d.participants).to.have.length(1);
  expect(d.participants[0]).to.include({ main: true, role: null, notes: null });
  expect(d.participants[0].person).to.deep.equal({
    id: ref.ana.id,
    name: 'Ana',
    contacts: [{ id: ref.ana.contacts[0].id, type: 1, value: 'ana@example.test', primary: true }],
  });
  expect(d.organization).to.deep.equal({ id: ref.acme.id, name: 'Acme', logo: null });
}

/** A creation's `custom_fields_changed`: the one number field Size of seedSalesReferences, set to '12'. */
export function expectSizeSetTo12(payload: any, ref: Record<string, any>) {
  expect(payload.custom_fields_changed).to.have.length(1);
  expect(payload.custom_fields_changed[0]).to.deep.include({
    field_id: ref.size.id,
    field_name: 'Size',
    field_type: 2,
    previous_answers: [],
  });
  expect(payload.custom_fields_changed[0].answers[0]).to.include({ value: '12', option_id: null });
}
