import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import { findUsers } from '../companies/company.store.js';
import { nextCodeSql } from '../companies/plan.js';
import { Organization, Person } from '../contacts/contact.entity.js';
import type { Db } from '../db.js';
import { Deal } from '../deals/deal.entity.js';

const DEALS = tableOf(Deal);
const ORGANIZATIONS = tableOf(Organization);
const PERSONS = tableOf(Person);
const DEAL_SUMMARY = ['id', 'code', 'title', 'status'] as const;
const ORGANIZATION_SUMMARY = ['id', 'name', 'logo'] as const;
const PERSON_SUMMARY = ['id', 'name'] as const;

export type DealSummary = Pick<Deal, (typeof DEAL_SUMMARY)[number]>;
export type OrganizationSummary = Pick<Organization, (typeof ORGANIZATION_SUMMARY)[number]>;
export type PersonSummary = Pick<Person, (typeof PERSON_SUMMARY)[number]>;

const NEXT_CODE = (entity: string) => statement(`crm_next_code_${entity}`, `${nextCodeSql('$1::uuid', entity)}`);
const nextCodes = new Map<string, ReturnType<typeof NEXT_CODE>>();

const exists = (table: string) =>
  statement(`crm_${table}_exists`, `select exists (select 1 from ${table} where company_id = $1 and id = $2) as found`);
const EXISTS = { deal: exists('deals'), organization: exists('organizations'), person: exists('persons') };

const byIds = <T extends string>(table: string, alias: string, select: string, name: T) =>
  statement(
    `crm_${name}_summaries`,
    `select ${select} from ${table} ${alias} where ${alias}.company_id = $1 and ${alias}.id = any($2::uuid[])`,
  );
const DEALS_BY_IDS = byIds('deals', 'd', DEALS.select('d', DEAL_SUMMARY), 'deal');
const ORGANIZATIONS_BY_IDS = byIds('organizations', 'o', ORGANIZATIONS.select('o', ORGANIZATION_SUMMARY), 'organization');
const PERSONS_BY_IDS = byIds('persons', 'p', PERSONS.select('p', PERSON_SUMMARY), 'person');

/** In the caller's transaction, so it rolls back with it (no gaps). */
export async function nextCode(db: Db, companyId: string, entity: string): Promise<number> {
  const st = nextCodes.get(entity) ?? NEXT_CODE(entity);
  nextCodes.set(entity, st);
  const [row] = await run<{ value: string | number }>(db, st, [companyId]);
  return Number(row?.value);
}

export async function linkExists(db: Db, kind: keyof typeof EXISTS, companyId: string, id: string): Promise<boolean> {
  const [row] = await run<{ found: boolean }>(db, EXISTS[kind], [companyId, id]);
  return row?.found ?? false;
}

export async function linkedRecords(
  db: Db,
  companyId: string,
  ids: { users: string[]; deals: string[]; organizations: string[]; persons: string[] },
) {
  // One after the other: `db` may be a transaction's client, which runs one statement at a time.
  const some = <R>(list: string[], load: () => Promise<R[]>) => (list.length ? load() : Promise.resolve([] as R[]));
  const users = await some(ids.users, () => findUsers(db, companyId, ids.users));
  const deals = await some(ids.deals, () => run<DealSummary>(db, DEALS_BY_IDS, [companyId, ids.deals]));
  const organizations = await some(ids.organizations, () =>
    run<OrganizationSummary>(db, ORGANIZATIONS_BY_IDS, [companyId, ids.organizations]),
  );
  const persons = await some(ids.persons, () => run<PersonSummary>(db, PERSONS_BY_IDS, [companyId, ids.persons]));
  return { users, deals, organizations, persons };
}
