/** The lead visibility rule (decision 0041), one place for every reader: team-visible, responsible, creator, follower or master user. */
import type { SalesKind } from './sales.entity.js';

export const LeadVisibility = { private: 0, team: 1 } as const;

export const salesRecordVisibleSql = (kind: SalesKind, alias: string, userParam: string) => `(
  ${alias}.visibility = ${LeadVisibility.team}
  or ${alias}.responsible_id = ${userParam}::uuid or ${alias}.created_by_id = ${userParam}::uuid
  or exists (select 1 from ${kind}_followers vf where vf.${kind}_id = ${alias}.id and vf.user_id = ${userParam}::uuid)
  or exists (select 1 from companies vc where vc.id = ${alias}.company_id and vc.master_user_id = ${userParam}::uuid))`;

export const leadVisibleSql = (alias: string, userParam: string) => salesRecordVisibleSql('lead', alias, userParam);

export interface LeadAccessFacts {
  companyId: string;
  visibility: number;
  responsibleId: string;
  createdById: string;
  followerIds?: readonly string[];
}

export interface LeadViewer {
  companyId: string;
  userId: string;
  isCompanyMaster: boolean;
}

/** services/crm/test/records.test.ts checks that both forms agree. */
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

export const dealVisibleSql = (alias: string, userParam: string) => salesRecordVisibleSql('deal', alias, userParam);
