/**
 * The proposal summaries the lead and deal details list (spec "Proposal summary"), as SQL the detail statement embeds.
 * In sales (below proposals, decision 0091) because the sales statements embed it; the proposal store uses it too.
 */

/** The proposal summary (spec "Proposal summary") of row `p` as JSON, with `created_by` and `approved_by` from users. */
export const proposalSummaryJson = (p: string) => `json_build_object('id', ${p}.id, 'code', ${p}.code, 'version', ${p}.version,
  'title', ${p}.title, 'status', ${p}.status, 'is_primary', ${p}.is_primary, 'discount_type', ${p}.discount_type,
  'discount_value', ${p}.discount_value, 'subtotal', ${p}.subtotal, 'total', ${p}.total, 'valid_until', ${p}.valid_until,
  'created_at', ${p}.created_at, 'updated_at', ${p}.updated_at, 'approved_at', ${p}.approved_at, 'archived_at', ${p}.archived_at,
  'rejected_at', ${p}.rejected_at,
  'created_by', (select json_build_object('id', u.id, 'name', u.name, 'avatar', u.avatar) from users u
    where u.company_id = ${p}.company_id and u.id = ${p}.created_by_id),
  'approved_by', (select json_build_object('id', u.id, 'name', u.name) from users u
    where u.company_id = ${p}.company_id and u.id = ${p}.approved_by_id))`;

/** The live proposals of record row `alias` (a lead or deal) as a JSON array of summaries, newest first. */
export const proposalSummariesOf = (kind: 'lead' | 'deal', alias: string) =>
  `coalesce((select json_agg(${proposalSummaryJson('pr')} order by pr.created_at desc, pr.id desc) from proposals pr
    where pr.company_id = ${alias}.company_id and pr.${kind}_id = ${alias}.id and pr.deleted_at is null), '[]')`;

const DATE_FIELDS = ['valid_until', 'created_at', 'updated_at', 'approved_at', 'archived_at', 'rejected_at'] as const;

/** A proposal's JSON from Postgres with its times as ISO 8601 in UTC, like every other date-time crm answers. */
export function proposalDates<T extends Record<string, unknown>>(p: T): T {
  const out: Record<string, unknown> = { ...p };
  for (const f of DATE_FIELDS) if (typeof out[f] === 'string') out[f] = new Date(out[f] as string).toISOString();
  if (Array.isArray(out.attachments))
    out.attachments = (out.attachments as Record<string, unknown>[]).map((a) => ({
      ...a,
      created_at: new Date(a.created_at as string).toISOString(),
    }));
  return out as T;
}
