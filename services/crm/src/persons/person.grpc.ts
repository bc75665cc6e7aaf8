import { AppError, isUuid } from '@svc/platform/errors';
import { type GrpcServiceRegistration, unary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import {
  type AssignPersonRecordsRequest,
  type PersonContactDetail,
  type PersonDetail,
  type PersonRecord,
  PersonServiceService,
} from '@svc/proto/crm/v1/persons';
import * as contacts from '../contacts/contact.store.js';
import type { PoolOf } from '../db.js';
import type { Deals } from '../deals/deal.service.js';
import type { Leads } from '../leads/lead.service.js';
import { recordsOfPerson } from './person.store.js';

const MAX_IDS = 5000;
const uuids = (ids: string[]) => ids.filter(isUuid).slice(0, MAX_IDS);
const opt = <T>(v: T | null | undefined): T | undefined => v ?? undefined;
const contactDetail = (c: PersonContactDetail): PersonContactDetail => ({ id: c.id, type: c.type, value: c.value, primary: c.primary });

/** Every statement is scoped by the company: another company's person is not found. */
export class PersonLookups {
  constructor(private readonly pool: PoolOf) {}

  async getPersons(companyId: string, ids: string[]): Promise<PersonDetail[]> {
    const wanted = uuids(ids);
    if (!isUuid(companyId) || !wanted.length) return [];
    const found = await contacts.personsWithContacts(await this.pool(), companyId, wanted);
    return found.map(({ person: p, contacts: held }) => ({
      id: p.id,
      name: p.name,
      birth_date: p.birthDate ? p.birthDate.toISOString() : undefined,
      gender: opt(p.gender),
      notes: opt(p.notes),
      contacts: held.map(contactDetail),
    }));
  }

  async getContact(companyId: string, contactId: string): Promise<{ contact?: PersonContactDetail; person_id?: string }> {
    if (!isUuid(companyId) || !isUuid(contactId)) return {};
    const c = await contacts.findContact(await this.pool(), companyId, contactId);
    return c ? { contact: contactDetail(c), person_id: c.personId } : {};
  }

  async findByName(companyId: string, term: string, limit: number): Promise<string[]> {
    if (!isUuid(companyId) || !term.trim()) return [];
    const pattern = `%${term.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return contacts.personIdsNamed(await this.pool(), companyId, pattern, Math.min(Math.max(limit, 1), MAX_IDS));
  }

  async findByPhone(companyId: string, digits: string[]): Promise<string | undefined> {
    const wanted = digits.filter((d) => /^\d{4,20}$/.test(d));
    if (!isUuid(companyId) || !wanted.length) return undefined;
    return opt(await contacts.personIdByPhone(await this.pool(), companyId, wanted));
  }

  async records(companyId: string, personId: string): Promise<{ leads: PersonRecord[]; deals: PersonRecord[] }> {
    if (!isUuid(companyId) || !isUuid(personId)) return { leads: [], deals: [] };
    return recordsOfPerson(await this.pool(), companyId, personId);
  }
}

/** Each record goes through crm's PUT path, so visibility and events apply; records the actor may not see are left. */
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

export function personGrpc(log: Logger, pool: PoolOf, services: { leads: Leads; deals: Deals }): GrpcServiceRegistration {
  const persons = new PersonLookups(pool);
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
