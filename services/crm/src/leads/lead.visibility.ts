/**
 * The lead visibility rule (spec: "Honors the visibility of the key creator"), in one place for every reader:
 * the lead detail and list statements embed `leadVisibleSql`, PUT and crm's gRPC peers call `leadAccess`.
 *
 * A user sees a lead when it is visible to the team (visibility 1: the company is the team; crm has no smaller
 * teams), or they are its responsible, its creator or one of its followers, or they are the company's master
 * user (the account administrator). Decision 0041.
 */
import { run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';

export const LeadVisibility = { private: 0, team: 1 } as const;

/** SQL truth value: user `userParam` (a uuid expression) may see lead row `alias`. */
export const leadVisibleSql = (alias: string, userParam: string) => `(
  ${alias}.visibility = ${LeadVisibility.team}
  or ${alias}.responsible_id = ${userParam}::uuid or ${alias}.created_by_id = ${userParam}::uuid
  or exists (select 1 from lead_followers vf where vf.lead_id = ${alias}.id and vf.user_id = ${userParam}::uuid)
  or exists (select 1 from companies vc where vc.id = ${alias}.company_id and vc.master_user_id = ${userParam}::uuid))`;

/** $1 company, $2 lead id, $3 user. */
const accessStatement = statement(
  'crm_lead_access',
  `select ${leadVisibleSql('l', '$3')} as visible from leads l where l.company_id = $1 and l.id = $2`,
);

/** `absent`: no such lead in the company (404); `hidden`: the user may not see it (403). */
export type LeadAccess = 'visible' | 'hidden' | 'absent';

export async function leadAccess(db: Pool | PoolClient, companyId: string, leadId: string, userId: string): Promise<LeadAccess> {
  const [row] = await run<{ visible: boolean }>(db, accessStatement, [companyId, leadId, userId]);
  if (!row) return 'absent';
  return row.visible ? 'visible' : 'hidden';
}
