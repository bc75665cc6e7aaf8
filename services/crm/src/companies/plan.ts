/**
 * SQL truth value: the company's plan is valid at the given time. crm owns the plan; events of a company
 * outside plan_valid_until are never written (the eventGate and the native lead statements both use this).
 */
export const planOpenSql = (companyParam: string, atParam: string) =>
  `exists (select 1 from companies c where c.id = ${companyParam} and (c.plan_valid_until is null or c.plan_valid_until > ${atParam}))`;

/**
 * SQL CTE body taking the next `code` of a per-company sequence (company_sequences): the row stays locked until
 * the transaction ends, and rolls back with it, so codes have no gaps. Put it in the statement that inserts the
 * record, so the lock is held for that statement and its commit only.
 */
export const nextCodeSql = (companyParam: string, entity: string) =>
  `insert into company_sequences (company_id, entity, value) values (${companyParam}, '${entity}', 1)
   on conflict (company_id, entity) do update set value = company_sequences.value + 1 returning value`;
