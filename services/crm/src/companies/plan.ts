import { tableOf } from '@svc/platform/db/entity-table';
import type { PlanGate } from '@svc/platform/events/plan';
import { planValidSql } from '@svc/platform/events/plan';
import { CompanySequence } from './company.entity.js';

const SEQUENCE_COLUMNS = tableOf(CompanySequence).columnList(['companyId', 'entity', 'value']);

/** The plan rule in SQL inside the event-writing statement (decision 0090). */
export const crmPlan: PlanGate = {
  kind: 'sql',
  open: (company, at) => `exists (select 1 from companies c where c.id = ${company} and ${planValidSql('c.plan_valid_until', at)})`,
};

/**
 * Put it in the inserting statement: the sequence row stays locked only until its commit, and codes have no gaps.
 * `count` codes are taken at once (an SQL expression); the statement returns the last of them.
 */
export const nextCodeSql = (companyParam: string, entity: string, count = '1') =>
  `insert into company_sequences (${SEQUENCE_COLUMNS}) values (${companyParam}, '${entity}', ${count})
   on conflict (company_id, entity) do update set value = company_sequences.value + ${count} returning value`;
