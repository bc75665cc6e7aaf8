import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import { nextCodeSql } from '../companies/plan.js';
import { Organization, Person } from '../contacts/contact.entity.js';
import type { Db } from '../db.js';
import { Customer } from './customer.entity.js';

const CUSTOMERS = tableOf(Customer);
const PERSONS = tableOf(Person);
const ORGANIZATIONS = tableOf(Organization);
const PERSON_BRIEF = ['id', 'name'] as const;
const ORGANIZATION_BRIEF = ['id', 'name', 'legalName'] as const;

export type CustomerWithParty = Customer & {
  person: Pick<Person, (typeof PERSON_BRIEF)[number]> | null;
  organization: Pick<Organization, (typeof ORGANIZATION_BRIEF)[number]> | null;
};

const WITH_PARTY = `${CUSTOMERS.select('c')},
  (select ${PERSONS.json('p', PERSON_BRIEF)} from persons p where p.id = c.person_id and p.company_id = c.company_id) as person,
  (select ${ORGANIZATIONS.json('o', ORGANIZATION_BRIEF)} from organizations o
     where o.id = c.organization_id and o.company_id = c.company_id) as organization`;

// A second find-or-create of the same party waits for the first's commit, so the unique pair never refuses it and
// no code of the sequence is spent on a row that is not written.
const LOCK_PARTY = statement(
  'crm_customer_lock_party',
  `select pg_advisory_xact_lock(hashtextextended('crm.customer:' || $1 || ':' || $2, 0))`,
);
const FIND_BY_PARTY = statement(
  'crm_customer_find_by_party',
  `select c.id from customers c where c.company_id = $1::uuid and (c.person_id = $2::uuid or c.organization_id = $3::uuid)`,
);
const SET_STATUS = statement(
  'crm_customer_set_status',
  `update customers set status = $3, updated_at = $4 where company_id = $1::uuid and id = $2::uuid and status <> $3`,
);
// The code comes from the company's sequence in the same statement: its row stays locked until the commit.
const INSERT = statement(
  'crm_customer_insert',
  `with seq as (${nextCodeSql('$2::uuid', 'customer')})
   insert into customers (${CUSTOMERS.columnList(['id', 'companyId', 'code', 'type', 'status', 'personId', 'organizationId', 'createdAt', 'updatedAt'])})
   select $1::uuid, $2::uuid, seq.value, $3, $4, $5::uuid, $6::uuid, $7, $7 from seq`,
);
const PARTY_EXISTS = statement(
  'crm_customer_party_exists',
  `select exists (select 1 from persons where company_id = $1::uuid and id = $2::uuid)
       or exists (select 1 from organizations where company_id = $1::uuid and id = $3::uuid) as found`,
);
const BY_ID = statement('crm_customer_by_id', `select ${WITH_PARTY} from customers c where c.company_id = $1::uuid and c.id = $2::uuid`);
const BY_CODE = statement(
  'crm_customer_by_code',
  `select ${WITH_PARTY} from customers c where c.company_id = $1::uuid and c.code = $2::int`,
);
// Newest first by code (codes grow with creation); the cursor is the last code of a page.
const LIST = statement(
  'crm_customer_list',
  `with f as (select * from customers c where c.company_id = $1::uuid
     and ($2::smallint is null or c.type = $2) and ($3::smallint is null or c.status = $3)
     and ($4::uuid is null or c.person_id = $4) and ($5::uuid is null or c.organization_id = $5))
   select (select count(*)::int from f) as total,
     coalesce((select json_agg(x order by x.code desc) from (
       select ${WITH_PARTY} from f c where ($6::int is null or c.code < $6) order by c.code desc offset $7 limit $8::int + 1) x), '[]') as records`,
);

export interface Party {
  personId: string | null;
  organizationId: string | null;
}

/** Held until the transaction ends; the id is lower-cased so one lock per party. */
export async function lockParty(db: Db, companyId: string, partyId: string): Promise<void> {
  await run(db, LOCK_PARTY, [companyId, partyId]);
}

export async function customerIdOf(db: Db, companyId: string, party: Party): Promise<string | null> {
  const [row] = await run<Pick<Customer, 'id'>>(db, FIND_BY_PARTY, [companyId, party.personId, party.organizationId]);
  return row?.id ?? null;
}

export async function setStatus(db: Db, companyId: string, id: string, status: number, at: Date): Promise<void> {
  await run(db, SET_STATUS, [companyId, id, status, at]);
}

export async function insertCustomer(db: Db, c: Omit<Customer, 'code' | 'updatedAt'>): Promise<void> {
  await run(db, INSERT, [c.id, c.companyId, c.type, c.status, c.personId ?? null, c.organizationId ?? null, c.createdAt]);
}

export async function partyExists(db: Db, companyId: string, party: Party): Promise<boolean> {
  const [row] = await run<{ found: boolean }>(db, PARTY_EXISTS, [companyId, party.personId, party.organizationId]);
  return row?.found ?? false;
}

export async function findCustomer(db: Db, companyId: string, ref: { id: string } | { code: number }): Promise<CustomerWithParty | null> {
  const [row] = 'id' in ref ? await run(db, BY_ID, [companyId, ref.id]) : await run(db, BY_CODE, [companyId, ref.code]);
  return row ? CUSTOMERS.hydrate<CustomerWithParty>(row) : null;
}

export interface CustomerFilter {
  type: number | null;
  status: number | null;
  personId: string | null;
  organizationId: string | null;
  beforeCode: number | null;
  skip: number;
  take: number;
}

/** One more than `take` when more follow. */
export async function customerPage(db: Db, companyId: string, f: CustomerFilter) {
  const [row] = await run<{ total: number; records: Record<string, unknown>[] }>(db, LIST, [
    companyId,
    f.type,
    f.status,
    f.personId,
    f.organizationId,
    f.beforeCode,
    f.skip,
    f.take,
  ]);
  return { total: row?.total ?? 0, records: (row?.records ?? []).map((r) => CUSTOMERS.hydrate<CustomerWithParty>(r)) };
}
