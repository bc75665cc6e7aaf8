import { nativePool } from '@svc/platform/db/native';
import { AppError, isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { ServiceContext } from '@svc/platform/service';
import {
  type AssignPersonRecordsRequest,
  type PersonContactDetail,
  type PersonDetail,
  type PersonRecord,
  PersonServiceService,
} from '@svc/proto/crm/v1/persons';
import type { Pool } from 'pg';
import { CONTACT_TYPES, normalizedContactSql } from '../contacts/contact.entity.js';
import type { Deals } from '../deals/deal.service.js';
import type { Leads } from '../leads/lead.service.js';

const MAX_IDS = 5000;
const uuids = (ids: string[]) => ids.filter(isUuid).slice(0, MAX_IDS);
const opt = <T>(v: T | null): T | undefined => v ?? undefined;

const PERSONS_SQL = `
select p.id, p.name, p.birth_date, p.gender, p.notes,
  coalesce((select json_agg(json_build_object('id', c.id, 'type', c.type, 'value', c.value, 'primary', c.primary) order by c.primary desc, c.id)
     from person_contacts c where c.person_id = p.id), '[]'::json) as contacts
from persons p where p.company_id = $1 and p.id = any($2::uuid[])`;

const RECORDS_SQL = (kind: 'lead' | 'deal') => `
select r.id, r.title, r.status, r.archived_at is not null as archived
from ${kind}_participants x join ${kind}s r on r.id = x.${kind}_id
where x.company_id = $1 and x.person_id = $2 order by r.created_at, r.id`;

/**
 * crm.v1.PersonService: what the chat context reads of persons (proto/crm/v1/persons.proto). Every statement is
 * scoped by the company; what another company owns is simply not found.
 */
export class PersonLookups {
  constructor(private readonly pool: () => Promise<Pool>) {}

  async getPersons(companyId: string, ids: string[]): Promise<PersonDetail[]> {
    const wanted = uuids(ids);
    if (!isUuid(companyId) || !wanted.length) return [];
    const { rows } = await (await this.pool()).query({ name: 'persons_for_chat', text: PERSONS_SQL, values: [companyId, wanted] });
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      birth_date: r.birth_date ? new Date(r.birth_date).toISOString() : undefined,
      gender: opt(r.gender),
      notes: opt(r.notes),
      contacts: r.contacts as PersonContactDetail[],
    }));
  }

  async getContact(companyId: string, contactId: string): Promise<{ contact?: PersonContactDetail; person_id?: string }> {
    if (!isUuid(companyId) || !isUuid(contactId)) return {};
    const { rows } = await (await this.pool()).query({
      name: 'person_contact_for_chat',
      text: 'select id, type, value, "primary", person_id from person_contacts where company_id = $1 and id = $2',
      values: [companyId, contactId],
    });
    const r = rows[0];
    if (!r) return {};
    return { contact: { id: r.id, type: r.type, value: r.value, primary: r.primary }, person_id: r.person_id };
  }

  async findByName(companyId: string, term: string, limit: number): Promise<string[]> {
    if (!isUuid(companyId) || !term.trim()) return [];
    const pattern = `%${term.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const { rows } = await (await this.pool()).query<{ id: string }>({
      name: 'persons_by_name_for_chat',
      text: 'select id from persons where company_id = $1 and name ilike $2 order by id limit $3',
      values: [companyId, pattern, Math.min(Math.max(limit, 1), MAX_IDS)],
    });
    return rows.map((r) => r.id);
  }

  async findByPhone(companyId: string, digits: string[]): Promise<string | undefined> {
    const wanted = digits.filter((d) => /^\d{4,20}$/.test(d));
    if (!isUuid(companyId) || !wanted.length) return undefined;
    const { rows } = await (await this.pool()).query<{ person_id: string }>({
      name: 'person_by_phone_for_chat',
      text: `select c.person_id from person_contacts c join persons p on p.id = c.person_id
        where c.company_id = $1 and c.type = ${CONTACT_TYPES.phone} and ${normalizedContactSql('c.')} = any($2::text[])
        order by p.created_at, p.id limit 1`,
      values: [companyId, wanted],
    });
    return rows[0]?.person_id;
  }

  async records(companyId: string, personId: string): Promise<{ leads: PersonRecord[]; deals: PersonRecord[] }> {
    if (!isUuid(companyId) || !isUuid(personId)) return { leads: [], deals: [] };
    const pool = await this.pool();
    const [leads, deals] = await Promise.all(
      (['lead', 'deal'] as const).map((kind) =>
        pool.query<PersonRecord>({ name: `person_${kind}s_for_chat`, text: RECORDS_SQL(kind), values: [companyId, personId] }),
      ),
    );
    return { leads: leads!.rows, deals: deals!.rows };
  }
}

/**
 * The person's open (status 1), non-archived leads or deals, each updated through crm's own PUT path with the new
 * responsible, so visibility, the responsible check and lead.updated / deal.updated apply as for PUT. Records the
 * actor may not see are left as they are.
 */
async function assign(
  persons: PersonLookups,
  services: { leads: Leads; deals: Deals },
  req: AssignPersonRecordsRequest,
): Promise<{ lead_ids: string[]; deal_ids: string[] }> {
  const records = await persons.records(req.company_id, req.person_id);
  const actor = { companyId: req.company_id, userId: req.actor_user_id };
  const apply = async (kind: 'leads' | 'deals', list: PersonRecord[]) => {
    const done: string[] = [];
    for (const r of list.filter((x) => x.status === 1 && !x.archived)) {
      try {
        if (kind === 'leads') await services.leads.update(actor, r.id, { title: r.title, responsible_id: req.responsible_user_id });
        else await services.deals.update(actor, r.id, { title: r.title, responsible_id: req.responsible_user_id });
        done.push(r.id);
      } catch (err) {
        if (err instanceof AppError && err.kind === 'not_found') continue;
        throw err;
      }
    }
    return done;
  };
  return {
    lead_ids: req.leads ? await apply('leads', records.leads) : [],
    deal_ids: req.deals ? await apply('deals', records.deals) : [],
  };
}

export function personGrpc(ctx: ServiceContext, services: { leads: Leads; deals: Deals }): GrpcServiceRegistration {
  const persons = new PersonLookups(() => nativePool(ctx.orm));
  const log = ctx.logger;
  return {
    definition: PersonServiceService,
    implementation: {
      getPersons: unary(log, async (req) => ({ persons: await persons.getPersons(req.company_id, req.person_ids) })),
      getPersonContact: unary(log, (req) => persons.getContact(req.company_id, req.contact_id)),
      findPersonsByName: unary(log, async (req) => ({ person_ids: await persons.findByName(req.company_id, req.term, req.limit) })),
      findPersonByPhone: unary(log, async (req) => ({ person_id: await persons.findByPhone(req.company_id, req.digits) })),
      getPersonRecords: unary(log, (req) => persons.records(req.company_id, req.person_id)),
      assignPersonRecords: unary(log, (req) => assign(persons, services, req)),
    },
  };
}
