import { tableOf } from '@svc/platform/db/entity-table';
import type { PlanGate } from '@svc/platform/events/plan';
import { planValidSql } from '@svc/platform/events/plan';
import { CompanySequence } from './company.entity.js';

const SEQUENCE_COLUMNS = tableOf(CompanySequence).columnList(['companyId', 'entity', 'value']);

/**
 * crm stores the plan, so its outbox writer applies the plan rule in SQL, inside the statement that writes the
 * events (decision 0090): events of a company outside plan_valid_until are never written.
 */
export const crmPlan: PlanGate = {
  kind: 'sql',
  open: (company, at) => `exists (select 1 from companies c where c.id = ${company} and ${planValidSql('c.plan_valid_until', at)})`,
};

/**
 * SQL CTE body taking the next `code` of a per-company sequence (company_sequences): the row stays locked until
 * the transaction ends, and rolls back with it, so codes have no gaps. Put it in the statement that inserts the
 * record, so the lock is held for that statement and its commit only.
 */
export const nextCodeSql = (companyParam: string, entity: string) =>
  `insert into company_sequences (${SEQUENCE_COLUMNS}) values (${companyParam}, '${entity}', 1)
   on conflict (company_id, entity) do update set value = company_sequences.value + 1 returning value`;
