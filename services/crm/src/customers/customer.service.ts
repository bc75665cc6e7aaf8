import { inTransaction } from '@svc/platform/db/native';
import { invalidField, isUuid, notFound } from '@svc/platform/errors';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { requireCompany } from '../companies/company.service.js';
import type { PoolOf } from '../db.js';
import { CustomerStatus, CustomerType } from './customer.entity.js';
import type { CreateCustomerBody, ListCustomersQuery } from './customer.schema.js';
import * as store from './customer.store.js';

/** Decision 0165: one customer per person and per organization; a second win or creation finds it. */

export type Party = { personId: string; organizationId?: undefined } | { organizationId: string; personId?: undefined };

/** Tasks show `{id, code, type, status, person, organization}` of it. */
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

const MAX_INT = 2147483647;

const json = (c: store.CustomerWithParty): CustomerJson => ({
  id: c.id,
  code: c.code,
  type: c.type,
  status: c.status,
  person: c.person ? { id: c.person.id, name: c.person.name } : null,
  organization: c.organization ? { id: c.organization.id, name: c.organization.name, legal_name: c.organization.legalName ?? null } : null,
  created_at: c.createdAt.toISOString(),
  updated_at: c.updatedAt.toISOString(),
});

const partyOf = (p: Party): store.Party => ({ personId: p.personId ?? null, organizationId: p.organizationId ?? null });

/** In the caller's transaction. A win passes active: a customer who buys again is active again. The caller checked the party. */
export async function findOrCreateCustomer(
  client: PoolClient,
  companyId: string,
  party: Party,
  at: Date,
  status?: number,
): Promise<{ id: string; created: boolean }> {
  // The lock's key is text: one spelling per id, whatever case the caller sent.
  const partyId = (party.personId ?? party.organizationId).toLowerCase();
  await store.lockParty(client, companyId.toLowerCase(), partyId);
  const found = await store.customerIdOf(client, companyId, partyOf(party));
  if (found) {
    if (status !== undefined) await store.setStatus(client, companyId, found, status, at);
    return { id: found, created: false };
  }
  const id = uuidv7();
  await store.insertCustomer(client, {
    id,
    companyId,
    type: party.personId ? CustomerType.PERSON : CustomerType.ORGANIZATION,
    status: status ?? CustomerStatus.ACTIVE,
    personId: party.personId ?? null,
    organizationId: party.organizationId ?? null,
    createdAt: at,
  });
  return { id, created: true };
}

/** The organization (a sale to a company), else the main person, else the first (decision 0165). */
export function customerPartyOf(
  deal: { organizationId?: string | null },
  rel: { participants: { participant: { main: boolean }; person: { id: string } }[] },
): Party | null {
  if (deal.organizationId) return { organizationId: deal.organizationId };
  const person = (rel.participants.find((p) => p.participant.main) ?? rel.participants[0])?.person;
  return person ? { personId: person.id } : null;
}

export class Customers {
  constructor(private readonly pool: PoolOf) {}

  async get(companyId: string, ref: string): Promise<CustomerJson> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const byCode = /^[1-9]\d{0,9}$/.test(ref) && Number(ref) <= MAX_INT;
    if (!byCode && !isUuid(ref)) throw notFound('Customer');
    const found = await store.findCustomer(pool, companyId, byCode ? { code: Number(ref) } : { id: ref.toLowerCase() });
    if (!found) throw notFound('Customer');
    return json(found);
  }

  async list(companyId: string, q: ListCustomersQuery): Promise<{ total: number; records: CustomerJson[]; next_cursor: string | null }> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const take = q.take;
    const page = await store.customerPage(pool, companyId, {
      type: q.type ?? null,
      status: q.status ?? null,
      personId: q.person_id ?? null,
      organizationId: q.organization_id ?? null,
      beforeCode: q.cursor === undefined ? null : decodeCursor(q.cursor),
      skip: q.skip,
      take,
    });
    const last = page.records[take - 1];
    return {
      total: page.total,
      records: page.records.slice(0, take).map(json),
      next_cursor: page.records.length > take && last ? encodeCursor(last.code) : null,
    };
  }

  /** 201 when made, 200 when the party already is one; a foreign party is a 400 naming its field. */
  async create(companyId: string, body: CreateCustomerBody): Promise<{ created: boolean; customer: CustomerJson }> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const party: Party = body.person_id ? { personId: body.person_id } : { organizationId: body.organization_id as string };
    const { id, created } = await inTransaction(pool, async (client) => {
      if (!(await store.partyExists(client, companyId, partyOf(party)))) {
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
