import { expect } from 'chai';
import type { CallResult } from './client.js';
import type { Tenant } from './fixtures.js';

type Call = <T = any>(
  method: string,
  path: string,
  opts?: { token?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<CallResult<T>>;

/** DealSnapshot (spec "Deal payloads"): the LeadSnapshot fields with deal_source and lead, plus the deal's own. */
export const DEAL_SNAPSHOT_FIELDS = [
  'id',
  'code',
  'title',
  'created_at',
  'updated_at',
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
  'deal_source',
  'marketing_lead_source',
  'participants',
  'partners',
  'organization',
  'custom_fields',
  'tags',
  'proposals',
  'lead',
  'followers',
  'has_channel_chat',
  'channel_chats',
  'has_whatsapp_chat',
  'whatsapp_chats',
  'crm_gain_reason',
  'crm_gain_reasons',
  'won_reason_description',
  'expected_close_date',
  'temperature',
];

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
