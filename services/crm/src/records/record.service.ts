import { invalidField, isUuid } from '@svc/platform/errors';
import {
  type CustomerSummary,
  type DealSummary,
  type DeliverySummary,
  type GetRecordSummariesRequest,
  type GetRecordSummariesResponse,
  type LeadSummary,
  type OrganizationSummary,
  type PersonSummary,
  RecordType,
  type TagSummary,
  type UserSummary,
} from '@svc/proto/crm/v1/records';
import type { Pool } from 'pg';
import { dealVisibleSql, leadVisibleSql } from '../sales/sales.visibility.js';

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

// One round trip for every type; a type with no ids costs an index probe with an empty array.
// Deals follow the visibility rule of leads (sales.visibility.ts); deliveries and customers are seen by every user of the
// company.
const SUMMARIES_SQL = `
select
  (select coalesce(json_agg(json_build_object('id', l.id, 'title', l.title, 'code', l.code)), '[]'::json)
     from leads l where l.company_id = $1::uuid and l.id = any($3::uuid[]) and ${leadVisibleSql('l', '$2::uuid')}) as leads,
  (select coalesce(json_agg(json_build_object('id', d.id, 'title', d.title, 'code', d.code)), '[]'::json)
     from deals d where d.company_id = $1::uuid and d.id = any($8::uuid[]) and ${dealVisibleSql('d', '$2::uuid')}) as deals,
  (select coalesce(json_agg(json_build_object('id', p.id, 'name', p.name)), '[]'::json)
     from persons p where p.company_id = $1::uuid and p.id = any($4::uuid[])) as persons,
  (select coalesce(json_agg(json_build_object('id', o.id, 'name', o.name, 'legal_name', o.legal_name)), '[]'::json)
     from organizations o where o.company_id = $1::uuid and o.id = any($5::uuid[])) as organizations,
  (select coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'bg', t.color_background, 'fg', t.color_foreground)), '[]'::json)
     from tags t where t.company_id = $1::uuid and t.id = any($6::uuid[])) as tags,
  (select coalesce(json_agg(json_build_object('id', u.id, 'name', u.name, 'avatar', u.avatar, 'email', u.email,
            'active', u.active, 'archived', u.archived)), '[]'::json)
     from users u where u.company_id = $1::uuid and u.id = any($7::uuid[])) as users,
  (select coalesce(json_agg(json_build_object('id', v.id, 'title', v.title, 'code', v.code, 'status', v.status)), '[]'::json)
     from deliveries v where v.company_id = $1::uuid and v.id = any($9::uuid[])) as deliveries,
  (select coalesce(json_agg(json_build_object('id', c.id, 'code', c.code, 'type', c.type, 'status', c.status,
            'person', (select json_build_object('id', p.id, 'name', p.name) from persons p
                        where p.company_id = c.company_id and p.id = c.person_id),
            'organization', (select json_build_object('id', o.id, 'name', o.name, 'legal_name', o.legal_name) from organizations o
                              where o.company_id = c.company_id and o.id = c.organization_id))), '[]'::json)
     from customers c where c.company_id = $1::uuid and c.id = any($10::uuid[])) as customers`;

interface SummaryRows {
  leads: LeadSummary[];
  deals: DealSummary[];
  persons: PersonSummary[];
  organizations: { id: string; name: string; legal_name: string | null }[];
  tags: { id: string; name: string; bg: string | null; fg: string | null }[];
  users: { id: string; name: string; avatar: string | null; email: string; active: boolean; archived: boolean }[];
  deliveries: DeliverySummary[];
  customers: {
    id: string;
    code: number;
    type: number;
    status: number;
    person: PersonSummary | null;
    organization: { id: string; name: string; legal_name: string | null } | null;
  }[];
}

const opt = <T>(v: T | null): T | undefined => v ?? undefined;
const organizationSummary = (o: { id: string; name: string; legal_name: string | null }): OrganizationSummary => ({
  id: o.id,
  name: o.name,
  legal_name: opt(o.legal_name),
});

export class RecordSummaries {
  constructor(private readonly pool: () => Promise<Pool>) {}

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
    const pool = await this.pool();
    const { rows } = await pool.query<SummaryRows>({
      name: 'crm_record_summaries',
      text: SUMMARIES_SQL,
      values: [
        req.company_id,
        req.viewer_user_id,
        ids.get(RecordType.RECORD_TYPE_LEAD) ?? [],
        ids.get(RecordType.RECORD_TYPE_PERSON) ?? [],
        ids.get(RecordType.RECORD_TYPE_ORGANIZATION) ?? [],
        ids.get(RecordType.RECORD_TYPE_TAG) ?? [],
        ids.get(RecordType.RECORD_TYPE_USER) ?? [],
        ids.get(RecordType.RECORD_TYPE_DEAL) ?? [],
        ids.get(RecordType.RECORD_TYPE_DELIVERY) ?? [],
        ids.get(RecordType.RECORD_TYPE_CUSTOMER) ?? [],
      ],
    });
    const row = rows[0]!;
    return {
      ...empty,
      leads: row.leads,
      deals: row.deals,
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
      tags: row.tags.map((t): TagSummary => ({ id: t.id, name: t.name, color_background: opt(t.bg), color_foreground: opt(t.fg) })),
      users: row.users.map(
        (u): UserSummary => ({ id: u.id, name: u.name, avatar: opt(u.avatar), email: u.email, active: u.active, archived: u.archived }),
      ),
    };
  }
}
