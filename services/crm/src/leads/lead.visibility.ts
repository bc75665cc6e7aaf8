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

/**
 * SQL truth value: user `userParam` (a uuid expression) may see the lead or deal row `alias`; `followers` is the
 * table of its followers and its column naming the record, when the record kind has followers.
 */
export const salesRecordVisibleSql = (alias: string, userParam: string, followers: { table: string; column: string } | null) => `(
  ${alias}.visibility = ${LeadVisibility.team}
  or ${alias}.responsible_id = ${userParam}::uuid or ${alias}.created_by_id = ${userParam}::uuid${
    followers
      ? `
  or exists (select 1 from ${followers.table} vf where vf.${followers.column} = ${alias}.id and vf.user_id = ${userParam}::uuid)`
      : ''
  }
  or exists (select 1 from companies vc where vc.id = ${alias}.company_id and vc.master_user_id = ${userParam}::uuid))`;

/** SQL truth value: user `userParam` (a uuid expression) may see lead row `alias`. */
export const leadVisibleSql = (alias: string, userParam: string) =>
  salesRecordVisibleSql(alias, userParam, { table: 'lead_followers', column: 'lead_id' });

export interface LeadAccessFacts {
  companyId: string;
  visibility: number;
  responsibleId: string;
  createdById: string;
  /** The lead's followers (lead_followers). */
  followerIds?: readonly string[];
}

export interface LeadViewer {
  companyId: string;
  userId: string;
  /** The viewer is the master user of the company. */
  isCompanyMaster: boolean;
}

/** The same rule for a lead already loaded (services/crm/test/records.test.ts checks that both forms agree). */
export function canSeeLead(lead: LeadAccessFacts, viewer: LeadViewer): boolean {
  if (lead.companyId !== viewer.companyId) return false;
  return (
    lead.visibility === LeadVisibility.team ||
    viewer.isCompanyMaster ||
    lead.responsibleId === viewer.userId ||
    lead.createdById === viewer.userId ||
    (lead.followerIds ?? []).includes(viewer.userId)
  );
}

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
