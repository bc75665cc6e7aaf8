import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import type { Db } from '../db.js';
import type { RecordRef } from '../records/record.links.js';
import { Contract, ContractRenewal } from './contract.entity.js';

const CONTRACTS = tableOf(Contract);
const RENEWALS = tableOf(ContractRenewal);

const byRef = (by: 'id' | 'code', lock: boolean) =>
  statement(
    `crm_contract_by_${by}${lock ? '_locked' : ''}`,
    `select ${CONTRACTS.select('c')} from contracts c where c.company_id = $1 and c.${by} = $2${lock ? ' for update' : ''}`,
  );
const BY_REF = { id: byRef('id', false), code: byRef('code', false), idLocked: byRef('id', true), codeLocked: byRef('code', true) };
const INSERT = statement('crm_contract_insert', CONTRACTS.insert());
const UPDATE = statement('crm_contract_update', CONTRACTS.update(['id', 'companyId']));
const INSERT_RENEWAL = statement('crm_contract_renewal_insert', RENEWALS.insert());
const RENEWALS_OF = statement(
  'crm_contract_renewals_of',
  `select ${RENEWALS.select('r')} from contract_renewals r where r.company_id = $1 and r.contract_id = $2 order by r.renewed_at, r.id`,
);

/** The contract `ref` names (by id or code); `lock` holds it until the transaction ends. */
export async function findContract(db: Db, ref: RecordRef, lock = false): Promise<Contract | null> {
  const st = 'id' in ref ? (lock ? BY_REF.idLocked : BY_REF.id) : lock ? BY_REF.codeLocked : BY_REF.code;
  const [row] = await run(db, st, [ref.companyId, 'id' in ref ? ref.id : ref.code]);
  return row ? CONTRACTS.hydrate(row) : null;
}

export async function insertContract(db: Db, contract: Contract): Promise<void> {
  await run(db, INSERT, CONTRACTS.values(contract));
}

export async function updateContract(db: Db, contract: Contract): Promise<void> {
  await run(db, UPDATE, CONTRACTS.values(contract));
}

export async function insertRenewal(db: Db, renewal: ContractRenewal): Promise<void> {
  await run(db, INSERT_RENEWAL, RENEWALS.values(renewal));
}

/** A contract's renewals, oldest first. */
export async function renewalsOf(db: Db, companyId: string, contractId: string): Promise<ContractRenewal[]> {
  return (await run(db, RENEWALS_OF, [companyId, contractId])).map((r) => RENEWALS.hydrate(r));
}
