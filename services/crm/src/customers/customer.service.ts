import { inTransaction, run, statement } from '@svc/platform/db/native';
import { invalidField, isUuid, notFound } from '@svc/platform/errors';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { nextCodeSql } from '../companies/plan.js';
import { CustomerStatus, CustomerType } from './customer.entity.js';
import type { CreateCustomerBody, ListCustomersQuery } from './customer.schema.js';

/**
 * Customers (decision 0165): found or made when a deal is won, and through the admin API. One per person and one per
 * organization of a company; finding one that exists is the answer to a second win or a second creation.
 */

/** The person or the organization a customer is. */
export type Party = { personId: string; organizationId?: undefined } | { organizationId: string; personId?: undefined };

/** The customer as the admin API answers it; tasks show `{id, code, type, status, person, organization}` of it. */
export interface CustomerJson {
  id: string;
  code: number;
  type: number;
  status: number;
  person: { id: string; name: string } | null;
  organization: { id: string; name: string; legal_name: string | null } | null;
  created_at: string;
  updated_at: string;
}

interface CustomerRow {
  id: string;
  code: number;
  type: number;
  status: number;
  // The native pool answers timestamps as text.
  created_at: string | Date;
  updated_at: string | Date;
  person: { id: string; name: string } | null;
  organization: { id: string; name: string; legal_name: string | null } | null;
}

const ROW_SELECT = `c.id, c.code, c.type, c.status, c.created_at, c.updated_at,
  (select json_build_object('id', p.id, 'name', p.name) from persons p where p.id = c.person_id and p.company_id = c.company_id) as person,
  (select json_build_object('id', o.id, 'name', o.name, 'legal_name', o.legal_name) from organizations o
     where o.id = c.organization_id and o.company_id = c.company_id) as organization`;

const json = (r: CustomerRow): CustomerJson => ({
  id: r.id,
  code: r.code,
  type: r.type,
  status: r.status,
  person: r.person,
  organization: r.organization,
  created_at: new Date(r.created_at).toISOString(),
  updated_at: new Date(r.updated_at).toISOString(),
});

// A second find-or-create of the same party waits for the first's commit, so the unique pair never refuses it and
// no code of the sequence is spent on a row that is not written.
const LOCK_PARTY = statement(
  'crm_customer_lock_party',
  `select pg_advisory_xact_lock(hashtextextended('crm.customer:' || $1 || ':' || $2, 0))`,
);
const FIND_BY_PARTY = statement(
  'crm_customer_find_by_party',
  `select id from customers where company_id = $1::uuid and (person_id = $2::uuid or organization_id = $3::uuid)`,
);
const SET_STATUS = statement(
  'crm_customer_set_status',
  `update customers set status = $3, updated_at = $4 where company_id = $1::uuid and id = $2::uuid and status <> $3`,
);
const INSERT = statement(
  'crm_customer_insert',
  `with seq as (${nextCodeSql('$2::uuid', 'customer')})
   insert into customers (id, company_id, code, type, status, person_id, organization_id, created_at, updated_at)
   select $1::uuid, $2::uuid, seq.value, $3, $4, $5::uuid, $6::uuid, $7, $7 from seq`,
);
const PARTY_EXISTS = statement(
  'crm_customer_party_exists',
  `select exists (select 1 from persons where company_id = $1::uuid and id = $2::uuid)
       or exists (select 1 from organizations where company_id = $1::uuid and id = $3::uuid) as found`,
);
const BY_ID = statement('crm_customer_by_id', `select ${ROW_SELECT} from customers c where c.company_id = $1::uuid and c.id = $2::uuid`);
const BY_CODE = statement(
  'crm_customer_by_code',
  `select ${ROW_SELECT} from customers c where c.company_id = $1::uuid and c.code = $2::int`,
);
const COMPANY_EXISTS = statement('crm_customer_company_exists', `select 1 from companies where id = $1::uuid`);
// Newest first by code (codes grow with creation); the cursor is the last code of a page.
const LIST = statement(
  'crm_customer_list',
  `with f as (select * from customers c where c.company_id = $1::uuid
     and ($2::smallint is null or c.type = $2) and ($3::smallint is null or c.status = $3)
     and ($4::uuid is null or c.person_id = $4) and ($5::uuid is null or c.organization_id = $5))
   select (select count(*)::int from f) as total,
     coalesce((select json_agg(x order by x.code desc) from (
       select ${ROW_SELECT} from f c where ($6::int is null or c.code < $6) order by c.code desc offset $7 limit $8::int + 1) x), '[]') as records`,
);

const MAX_INT = 2147483647;

/**
 * Finds the customer of `party` in `companyId`, or makes it (the next code), in the caller's transaction. `status`,
 * when given, is the status of either (a win passes active: a customer who buys again is active again); else a new
 * one is active and a found one keeps its own. The party must exist in the company (the caller checked it).
 */
export async function findOrCreateCustomer(
  client: PoolClient,
  companyId: string,
  party: Party,
  at: Date,
  status?: number,
): Promise<{ id: string; created: boolean }> {
  // The lock's key is text: one spelling per id, whatever case the caller sent.
  const partyId = (party.personId ?? party.organizationId).toLowerCase();
  await run(client, LOCK_PARTY, [companyId.toLowerCase(), partyId]);
  const [found] = await run<{ id: string }>(client, FIND_BY_PARTY, [companyId, party.personId ?? null, party.organizationId ?? null]);
  if (found) {
    if (status !== undefined) await run(client, SET_STATUS, [companyId, found.id, status, at]);
    return { id: found.id, created: false };
  }
  const id = uuidv7();
  const type = party.personId ? CustomerType.PERSON : CustomerType.ORGANIZATION;
  await run(client, INSERT, [
    id,
    companyId,
    type,
    status ?? CustomerStatus.ACTIVE,
    party.personId ?? null,
    party.organizationId ?? null,
    at,
  ]);
  return { id, created: true };
}

/**
 * Who winning a deal makes a customer: its organization (a sale to a company), else its main person, else its first
 * person; null when the deal has neither (decision 0165).
 */
export function customerPartyOf(
  deal: { organizationId?: string | null },
  rel: { participants: { participant: { main: boolean }; person: { id: string } }[] },
): Party | null {
  if (deal.organizationId) return { organizationId: deal.organizationId };
  const person = (rel.participants.find((p) => p.participant.main) ?? rel.participants[0])?.person;
  return person ? { personId: person.id } : null;
}

export class Customers {
  constructor(private readonly pool: () => Promise<Pool>) {}

  private async requireCompany(db: Pool | PoolClient, companyId: string) {
    if (!isUuid(companyId) || !(await run(db, COMPANY_EXISTS, [companyId])).length) throw notFound('Company');
  }

  /** The customer `ref` (UUID or code) of the company, else 404. */
  async get(companyId: string, ref: string): Promise<CustomerJson> {
    const pool = await this.pool();
    await this.requireCompany(pool, companyId);
    const byCode = /^[1-9]\d{0,9}$/.test(ref) && Number(ref) <= MAX_INT;
    if (!byCode && !isUuid(ref)) throw notFound('Customer');
    const [row] = await run<CustomerRow>(pool, byCode ? BY_CODE : BY_ID, [companyId, byCode ? Number(ref) : ref.toLowerCase()]);
    if (!row) throw notFound('Customer');
    return json(row);
  }

  /** `{total, records, next_cursor}`: the company's customers, newest first, `skip`/`take` or `cursor` paging. */
  async list(companyId: string, q: ListCustomersQuery): Promise<{ total: number; records: CustomerJson[]; next_cursor: string | null }> {
    const pool = await this.pool();
    await this.requireCompany(pool, companyId);
    const take = q.take;
    const after = q.cursor === undefined ? null : decodeCursor(q.cursor);
    const [row] = await run<{ total: number; records: CustomerRow[] }>(pool, LIST, [
      companyId,
      q.type ?? null,
      q.status ?? null,
      q.person_id ?? null,
      q.organization_id ?? null,
      after,
      q.skip,
      take,
    ]);
    const rows = row?.records ?? [];
    const last = rows[take - 1];
    return {
      total: row?.total ?? 0,
      records: rows.slice(0, take).map(json),
      next_cursor: rows.length > take && last ? encodeCursor(last.code) : null,
    };
  }

  /**
   * POST: the customer of the person or organization sent, made when it has none (`created`: 201) or the one it
   * has (200), as a win finds it. The party must be the company's: else a 400 naming its field.
   */
  async create(companyId: string, body: CreateCustomerBody): Promise<{ created: boolean; customer: CustomerJson }> {
    const pool = await this.pool();
    await this.requireCompany(pool, companyId);
    const party: Party = body.person_id ? { personId: body.person_id } : { organizationId: body.organization_id as string };
    const { id, created } = await inTransaction(pool, async (client) => {
      const [exists] = await run<{ found: boolean }>(client, PARTY_EXISTS, [
        companyId,
        party.personId ?? null,
        party.organizationId ?? null,
      ]);
      if (!exists?.found) {
        throw party.personId
          ? invalidField('person_id', 'no such person in the company')
          : invalidField('organization_id', 'no such organization in the company');
      }
      return findOrCreateCustomer(client, companyId, party, new Date(), body.status);
    });
    return { created, customer: await this.get(companyId, id) };
  }
}

const encodeCursor = (code: number) => Buffer.from(JSON.stringify([code])).toString('base64url');

function decodeCursor(cursor: string): number {
  try {
    const [code] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown];
    if (Number.isInteger(code) && (code as number) > 0 && (code as number) <= MAX_INT) return code as number;
  } catch {
    // falls through to the 400
  }
  throw invalidField('cursor', 'not a cursor of this list');
}
