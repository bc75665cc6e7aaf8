/**
 * The lead visibility rule (spec: "Honors the visibility of the key creator"), in one place for every reader:
 * the detail, list and access statements of leads and deals (SalesStore.access) and crm's gRPC peers embed it.
 *
 * A user sees a lead when it is visible to the team (visibility 1: the company is the team; crm has no smaller
 * teams), or they are its responsible, its creator or one of its followers, or they are the company's master
 * user (the account administrator). Decision 0041.
 */
import type { SalesKind } from './sales.entity.js';

export const LeadVisibility = { private: 0, team: 1 } as const;

/**
 * SQL truth value: user `userParam` (a uuid expression) may see the lead or deal row `alias` (its followers are in
 * `<kind>_followers`).
 */
export const salesRecordVisibleSql = (kind: SalesKind, alias: string, userParam: string) => `(
  ${alias}.visibility = ${LeadVisibility.team}
  or ${alias}.responsible_id = ${userParam}::uuid or ${alias}.created_by_id = ${userParam}::uuid
  or exists (select 1 from ${kind}_followers vf where vf.${kind}_id = ${alias}.id and vf.user_id = ${userParam}::uuid)
  or exists (select 1 from companies vc where vc.id = ${alias}.company_id and vc.master_user_id = ${userParam}::uuid))`;

/** SQL truth value: user `userParam` (a uuid expression) may see lead row `alias`. */
export const leadVisibleSql = (alias: string, userParam: string) => salesRecordVisibleSql('lead', alias, userParam);

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

/** SQL truth value: user `userParam` may see deal row `alias` (the lead rule with the deal's followers, decision 0041). */
export const dealVisibleSql = (alias: string, userParam: string) => salesRecordVisibleSql('deal', alias, userParam);
