/**
 * Events of a company outside its plan are never written, nor issued later (spec, Events). crm also has the SQL form
 * below.
 */
export const planValidAt = (company: { plan_valid_until?: string | null | undefined }, at: Date) =>
  !company.plan_valid_until || Date.parse(company.plan_valid_until) > at.getTime();

export const planValidSql = (validUntil: string, at: string) => `(${validUntil} is null or ${validUntil} > ${at})`;

/**
 * `sql`: the plan's owner (crm) checks it inside the insert, in the same transaction; `ask`: asks crm (cached);
 * `none`: every event is written.
 */
export type PlanGate =
  | { kind: 'sql'; open(company: string, at: string): string }
  | { kind: 'ask'; open(companyId: string, at: Date): Promise<boolean> }
  | { kind: 'none' };

export const askPlan = (company: (companyId: string) => Promise<{ plan_valid_until?: string | null | undefined }>): PlanGate => ({
  kind: 'ask',
  open: async (companyId, at) => planValidAt(await company(companyId), at),
});
