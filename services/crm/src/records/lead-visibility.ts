/**
 * Who may see a lead. The spec: `visibility` is "0 private, 1 visible to the team" (default 0), and access
 * "respects the company and the permissions of the user who created the key (lead visibility included)".
 * It names no teams and no roles, and crm has neither, so our reading (docs/decisions/0021) is:
 *
 * - visibility 1 (team): every user of the lead's company (the company is the only team there is);
 * - visibility 0 (private): the lead's responsible user, the user who created it, and the company's master
 *   user (the administrator every company starts with).
 *
 * Followers do not exist yet; when they do, a follower of a private lead should see it too (add it to both
 * forms below). Another company's lead is never visible; callers answer it as not found.
 *
 * The rule has two forms that must agree (services/crm/test/records.test.ts checks both): a predicate for
 * a lead already loaded, and a SQL condition for queries that select only visible leads.
 */
export const LeadVisibility = { private: 0, team: 1 } as const;

export interface LeadAccessFacts {
  companyId: string;
  visibility: number;
  responsibleId: string;
  createdById: string;
}

export interface LeadViewer {
  companyId: string;
  userId: string;
  /** The viewer is the master user of the company. */
  isCompanyMaster: boolean;
}

export function canSeeLead(lead: LeadAccessFacts, viewer: LeadViewer): boolean {
  if (lead.companyId !== viewer.companyId) return false;
  return (
    lead.visibility === LeadVisibility.team ||
    viewer.isCompanyMaster ||
    lead.responsibleId === viewer.userId ||
    lead.createdById === viewer.userId
  );
}

/**
 * The same rule as a SQL condition on the `leads` row named `lead`, for the viewer whose user id is the
 * bound parameter `viewer` (e.g. `$2::uuid`). It reads `companies` for the master user, so it runs in crm's
 * schema; the caller still filters by company.
 */
export function leadVisibleSql(lead: string, viewer: string): string {
  return `(${lead}.visibility = ${LeadVisibility.team} or ${lead}.responsible_id = ${viewer} or ${lead}.created_by_id = ${viewer} or exists (select 1 from companies lv_c where lv_c.id = ${lead}.company_id and lv_c.master_user_id = ${viewer}))`;
}
