import { invalidField, isUuid } from '@svc/platform/errors';
import {
  type CustomerSummary,
  type DealSummary,
  type GetRecordSummariesRequest,
  type GetRecordSummariesResponse,
  type LeadSummary,
  type OrganizationSummary,
  RecordType,
  type TagSummary,
  type UserSummary,
} from '@svc/proto/crm/v1/records';
import type { PoolOf } from '../db.js';
import { recordSummaries } from './summary.store.js';

const MAX_REFS = 5000;

/** Every id asked for per type, each at most once; ids that are not UUIDs name nothing and are dropped. */
function idsByType(refs: GetRecordSummariesRequest['refs']): Map<RecordType, string[]> {
  const sets = new Map<RecordType, Set<string>>();
  for (const ref of refs) {
    if (!isUuid(ref.id)) continue;
    const id = ref.id.toLowerCase();
    const set = sets.get(ref.type) ?? new Set<string>();
    sets.set(ref.type, set.add(id));
  }
  return new Map([...sets].map(([type, set]) => [type, [...set]]));
}

const opt = <T>(v: T | null): T | undefined => v ?? undefined;
const organizationSummary = (o: { id: string; name: string; legalName?: string | null }): OrganizationSummary => ({
  id: o.id,
  name: o.name,
  legal_name: opt(o.legalName ?? null),
});

export class RecordSummaries {
  constructor(private readonly pool: PoolOf) {}

  async get(req: GetRecordSummariesRequest): Promise<GetRecordSummariesResponse> {
    if (!isUuid(req.company_id)) throw invalidField('company_id', 'must be a UUID');
    if (!isUuid(req.viewer_user_id)) throw invalidField('viewer_user_id', 'must be a UUID');
    if (req.refs.length > MAX_REFS) throw invalidField('refs', `at most ${MAX_REFS}`);
    const ids = idsByType(req.refs);
    const empty: GetRecordSummariesResponse = {
      leads: [],
      deals: [],
      persons: [],
      organizations: [],
      tags: [],
      users: [],
      deliveries: [],
      customers: [],
    };
    const asked = [
      RecordType.RECORD_TYPE_LEAD,
      RecordType.RECORD_TYPE_DEAL,
      RecordType.RECORD_TYPE_PERSON,
      RecordType.RECORD_TYPE_ORGANIZATION,
      RecordType.RECORD_TYPE_TAG,
      RecordType.RECORD_TYPE_DELIVERY,
      RecordType.RECORD_TYPE_CUSTOMER,
    ];
    if (![...asked, RecordType.RECORD_TYPE_USER].some((t) => ids.get(t)?.length)) return empty;
    const of = (type: RecordType) => ids.get(type) ?? [];
    const row = await recordSummaries(await this.pool(), req.company_id, req.viewer_user_id, {
      leads: of(RecordType.RECORD_TYPE_LEAD),
      deals: of(RecordType.RECORD_TYPE_DEAL),
      persons: of(RecordType.RECORD_TYPE_PERSON),
      organizations: of(RecordType.RECORD_TYPE_ORGANIZATION),
      tags: of(RecordType.RECORD_TYPE_TAG),
      users: of(RecordType.RECORD_TYPE_USER),
      deliveries: of(RecordType.RECORD_TYPE_DELIVERY),
      customers: of(RecordType.RECORD_TYPE_CUSTOMER),
    });
    return {
      ...empty,
      leads: row.leads as LeadSummary[],
      deals: row.deals as DealSummary[],
      deliveries: row.deliveries,
      persons: row.persons,
      organizations: row.organizations.map(organizationSummary),
      customers: row.customers.map(
        (c): CustomerSummary => ({
          id: c.id,
          code: c.code,
          type: c.type,
          status: c.status,
          person: opt(c.person),
          organization: c.organization ? organizationSummary(c.organization) : undefined,
        }),
      ),
      tags: row.tags.map(
        (t): TagSummary => ({ id: t.id, name: t.name, color_background: opt(t.colorBackground), color_foreground: opt(t.colorForeground) }),
      ),
      users: row.users.map(
        (u): UserSummary => ({ id: u.id, name: u.name, avatar: opt(u.avatar), email: u.email, active: u.active, archived: u.archived }),
      ),
    };
  }
}
