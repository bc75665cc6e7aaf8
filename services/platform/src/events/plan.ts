/**
 * The plan rule (spec, Events): a company's events are issued only while its plan is valid, `plan_valid_until`
 * null meaning no end. Events of a company outside its plan are never written to the outbox, nor issued later.
 * The rule has this one JS form and, for the service that stores the plan (crm), one SQL form beside it.
 */
export const planValidAt = (company: { plan_valid_until?: string | null | undefined }, at: Date) =>
  !company.plan_valid_until || Date.parse(company.plan_valid_until) > at.getTime();

/** The rule as an SQL truth value over a `plan_valid_until` expression and a time expression. */
export const planValidSql = (validUntil: string, at: string) => `(${validUntil} is null or ${validUntil} > ${at})`;

/**
 * How an outbox writer applies the plan rule:
 * - `sql`: the service stores the plan (crm): `open(company, at)` is an SQL truth value over two SQL expressions,
 *   evaluated inside the statement that inserts the events (no extra round trip, read in the same transaction).
 * - `ask`: the service asks the plan's owner (crm over gRPC, cached): `open` answers for a company at a time.
 * - `none`: every event is written (tests of the relay, a service without tenants' plans).
 */
export type PlanGate =
  | { kind: 'sql'; open(company: string, at: string): string }
  | { kind: 'ask'; open(companyId: string, at: Date): Promise<boolean> }
  | { kind: 'none' };

/** The gate of a service that asks crm for the company: `askPlan((id) => crm.getCompany(id))` (CrmPeer caches it). */
export const askPlan = (company: (companyId: string) => Promise<{ plan_valid_until?: string | null | undefined }>): PlanGate => ({
  kind: 'ask',
  open: async (companyId, at) => planValidAt(await company(companyId), at),
});
