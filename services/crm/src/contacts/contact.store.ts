import type { MikroORM } from '@mikro-orm/postgresql';
import { tableOf } from '@svc/platform/db/entity-table';
import { EntityColumns, run, type Statement, statement } from '@svc/platform/db/native';
import { invalidField } from '@svc/platform/errors';
import type { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../db.js';
import { CONTACT_TYPES, normalizedContactSql, Organization, Person, PersonContact } from './contact.entity.js';

type Json = Record<string, unknown>;

export interface PersonWithContacts {
  person: Person;
  contacts: PersonContact[];
  /** resolvePerson created the person (no other context can hold anything of it yet). */
  created?: boolean;
  /** resolvePerson found the person by a contact of this type (CONTACT_TYPES) it was sent (decision 0182). */
  matchedType?: number;
}

export interface PersonRequest {
  name?: string | undefined;
  birth_date?: string | null | undefined;
  gender?: number | null | undefined;
  notes?: string | null | undefined;
  contacts?: { type: number; value: string }[] | undefined;
  avoid_duplicate?: boolean | undefined;
  duplicate_check_types?: number[] | undefined;
}

/** How contacts compare for deduplication: e-mails without case, phones by their digits, others trimmed. */
export function normalizedContact(type: number, value: string): string {
  if (type === CONTACT_TYPES.email) return value.trim().toLowerCase();
  if (type === CONTACT_TYPES.phone) return value.replace(/\D/g, '');
  return value.trim();
}
/** Persons and organizations written by lead creation and update, on the caller's transaction client. */
export class ContactStore {
  private readonly person: EntityColumns<Person>;
  private readonly contact: EntityColumns<PersonContact>;
  readonly organization: EntityColumns<Organization>;
  /** $1 company, $2 `[{type, norm}]`: the oldest person holding one of these contacts. */
  private readonly findByContacts: Statement;
  private readonly insertPersons: Statement;
  private readonly insertContacts: Statement;
  private readonly insertOrganizations: Statement;
  private readonly lock: Statement;

  constructor(orm: MikroORM) {
    this.person = new EntityColumns(orm, Person);
    this.contact = new EntityColumns(orm, PersonContact);
    this.organization = new EntityColumns(orm, Organization);
    // Driven by the probes (lateral: the planner cannot turn it into a scan of the company's contacts joined to them):
    // each is an index look-up on person_contacts_normalized_idx, whatever the company's size or statistics.
    this.findByContacts = statement(
      'crm_person_find_by_contacts',
      `select json_build_object('person', ${this.person.json('p')}, 'contacts',
          coalesce((select json_agg(${this.contact.json('c')} order by c.type, c.primary desc, c.id) from person_contacts c
            where c.company_id = p.company_id and c.person_id = p.id), '[]')) as found
        from persons p where p.company_id = $1 and p.id = (
          select f.id from jsonb_to_recordset($2::jsonb) as q(type int, norm text)
          cross join lateral (
            select hp.id, hp.created_at from person_contacts h join persons hp on hp.id = h.person_id
            where h.company_id = $1 and h.type = q.type and ${normalizedContactSql('h.')} = q.norm
            order by hp.created_at, hp.id limit 1) f
          order by f.created_at, f.id limit 1)`,
    );
    const insert = (table: string) =>
      statement(
        `crm_insert_${table}`,
        `insert into ${table} select (jsonb_populate_record(null::${table}, x)).* from jsonb_array_elements($1::jsonb) x`,
      );
    this.insertPersons = insert('persons');
    this.insertContacts = insert('person_contacts');
    this.insertOrganizations = insert('organizations');
    // One transaction lock per key, taken in one order (of the hashes) so that two creations never wait on each other
    // in a cycle.
    this.lock = statement(
      'crm_xact_locks',
      'select count(pg_advisory_xact_lock(h)) from (select distinct hashtext(k) as h from unnest($1::text[]) k order by 1) s',
    );
  }

  /** Spec rule 4. A lock per company and normalized contact serializes deduplications sharing a contact, so the same e-mail makes one person. */
  async resolvePerson(client: PoolClient, companyId: string, input: PersonRequest, path: string, at: Date): Promise<PersonWithContacts> {
    const sent = dedupeContacts(input.contacts ?? []);
    const types = new Set(input.duplicate_check_types ?? []);
    if (input.avoid_duplicate && types.size) {
      await run(client, this.lock, [sent.map((c) => `person_contact:${companyId}:${c.type}:${normalizedContact(c.type, c.value)}`)]);
      const usable = probesOf(sent, types);
      const [row] = usable.length ? await run<{ found: Json }>(client, this.findByContacts, [companyId, JSON.stringify(usable)]) : [];
      if (row) {
        const person = this.person.hydrate(row.found.person as Json);
        const contacts = ((row.found.contacts as Json[]) ?? []).map((c) => this.contact.hydrate(c));
        const have = new Set(contacts.map((c) => `${c.type}:${normalizedContact(c.type, c.value)}`));
        const typesHeld = new Set(contacts.map((c) => c.type));
        const added: PersonContact[] = [];
        for (const c of sent) {
          if (have.has(`${c.type}:${normalizedContact(c.type, c.value)}`)) continue;
          added.push({ id: uuidv7(), companyId, personId: person.id, type: c.type, value: c.value, primary: !typesHeld.has(c.type) });
          typesHeld.add(c.type);
        }
        if (added.length) await run(client, this.insertContacts, [JSON.stringify(added.map((c) => this.contact.row(c)))]);
        // The receipt names one matching type: e-mail before phone before the others.
        const matched = usable.filter((u) => have.has(`${u.type}:${u.norm}`)).map((u) => u.type);
        const matchedType = [...matched].sort((a, b) => a - b)[0];
        return { person, contacts: [...contacts, ...added], ...(matchedType !== undefined ? { matchedType } : {}) };
      }
    }
    if (!input.name) throw invalidField(`${path}.name`, 'required to create a person');
    const person: Person = {
      id: uuidv7(),
      companyId,
      name: input.name,
      birthDate: input.birth_date ? new Date(input.birth_date) : null,
      gender: input.gender ?? null,
      notes: input.notes ?? null,
      createdAt: at,
    };
    const seen = new Set<number>();
    const contacts = sent.map((c): PersonContact => {
      const primary = !seen.has(c.type);
      seen.add(c.type);
      return { id: uuidv7(), companyId, personId: person.id, type: c.type, value: c.value, primary };
    });
    await run(client, this.insertPersons, [JSON.stringify([this.person.row(person)])]);
    if (contacts.length) await run(client, this.insertContacts, [JSON.stringify(contacts.map((c) => this.contact.row(c)))]);
    return { person, contacts, created: true };
  }

  /** Read without locks: the transaction that resolves it may still find another. */
  async candidate(db: Pool | PoolClient, companyId: string, input: PersonRequest): Promise<string | null> {
    const types = new Set(input.duplicate_check_types ?? []);
    if (!input.avoid_duplicate || !types.size) return null;
    const usable = probesOf(dedupeContacts(input.contacts ?? []), types);
    if (!usable.length) return null;
    const [row] = await run<{ found: { person: { id: string } } }>(db, this.findByContacts, [companyId, JSON.stringify(usable)]);
    return row?.found.person.id ?? null;
  }

  async addContact(client: PoolClient, holder: PersonWithContacts, type: number, value: string): Promise<PersonWithContacts> {
    const norm = normalizedContact(type, value);
    if (holder.contacts.some((c) => c.type === type && normalizedContact(c.type, c.value) === norm)) return holder;
    const contact: PersonContact = {
      id: uuidv7(),
      companyId: holder.person.companyId,
      personId: holder.person.id,
      type,
      value: value.trim(),
      primary: !holder.contacts.some((c) => c.type === type),
    };
    await run(client, this.insertContacts, [JSON.stringify([this.contact.row(contact)])]);
    return { person: holder.person, contacts: [...holder.contacts, contact] };
  }

  async createOrganization(client: PoolClient, companyId: string, input: Record<string, string | null | undefined>, at: Date) {
    const org: Organization = {
      id: uuidv7(),
      companyId,
      name: input.name ?? '',
      legalName: input.legal_name ?? null,
      document: input.document ?? null,
      industry: input.industry ?? null,
      description: input.description ?? null,
      phone: input.phone ?? null,
      email: input.email ?? null,
      site: input.site ?? null,
      logo: null,
      createdAt: at,
    };
    await run(client, this.insertOrganizations, [JSON.stringify([this.organization.row(org)])]);
    return org;
  }
}

/** The contacts of the deduplication types as the person search probes them (normalized; empty ones dropped). */
function probesOf(sent: { type: number; value: string }[], types: Set<number>) {
  return sent
    .filter((c) => types.has(c.type))
    .map((c) => ({ type: c.type, norm: normalizedContact(c.type, c.value) }))
    .filter((p) => p.norm !== '');
}

/** The same contact sent twice counts once. */
function dedupeContacts(contacts: { type: number; value: string }[]) {
  const seen = new Set<string>();
  return contacts.filter((c) => {
    const k = `${c.type}:${normalizedContact(c.type, c.value)}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

// Statements of the admin API and of the chat context's look-ups (crm.v1.PersonService).
const PERSONS = tableOf(Person);
const CONTACTS = tableOf(PersonContact);
const ORGANIZATIONS = tableOf(Organization);

const INSERT_PERSON = statement('crm_person_insert', PERSONS.insert());
const INSERT_CONTACT = statement('crm_person_contact_insert', CONTACTS.insert());
const INSERT_ORGANIZATION = statement('crm_organization_insert', ORGANIZATIONS.insert());
const PERSONS_BY_IDS = statement(
  'persons_for_chat',
  `select ${PERSONS.select('p')}, coalesce((select json_agg(${CONTACTS.json('c')} order by c.primary desc, c.id)
     from person_contacts c where c.person_id = p.id), '[]'::json) as contacts
   from persons p where p.company_id = $1 and p.id = any($2::uuid[])`,
);
const CONTACT_BY_ID = statement(
  'person_contact_for_chat',
  `select ${CONTACTS.select('c')} from person_contacts c where c.company_id = $1 and c.id = $2`,
);
const PERSONS_BY_NAME = statement(
  'persons_by_name_for_chat',
  'select p.id from persons p where p.company_id = $1 and p.name ilike $2 order by p.id limit $3',
);
const PERSON_BY_PHONE = statement(
  'person_by_phone_for_chat',
  `select c.person_id as "personId" from person_contacts c join persons p on p.id = c.person_id
   where c.company_id = $1 and c.type = ${CONTACT_TYPES.phone} and ${normalizedContactSql('c.')} = any($2::text[])
   order by p.created_at, p.id limit 1`,
);
/** A person created by the admin API with its contacts, in the caller's transaction. */
export async function insertPerson(db: Db, person: Person, contacts: PersonContact[]): Promise<void> {
  await run(db, INSERT_PERSON, PERSONS.values(person));
  for (const c of contacts) await run(db, INSERT_CONTACT, CONTACTS.values(c));
}

export async function insertOrganization(db: Db, organization: Organization): Promise<void> {
  await run(db, INSERT_ORGANIZATION, ORGANIZATIONS.values(organization));
}

/** The company's persons of these ids with their contacts, the primary one of a type first. */
export async function personsWithContacts(db: Db, companyId: string, ids: string[]): Promise<PersonWithContacts[]> {
  const rows = await run<Json & { contacts: Json[] }>(db, PERSONS_BY_IDS, [companyId, ids]);
  return rows.map(({ contacts, ...person }) => ({
    person: PERSONS.hydrate(person),
    contacts: contacts.map((c) => CONTACTS.hydrate(c)),
  }));
}

export async function findContact(db: Db, companyId: string, id: string): Promise<PersonContact | null> {
  const [row] = await run(db, CONTACT_BY_ID, [companyId, id]);
  return row ? CONTACTS.hydrate(row) : null;
}

/** The ids of the company's persons whose name matches a LIKE pattern, at most `limit`. */
export async function personIdsNamed(db: Db, companyId: string, likePattern: string, limit: number): Promise<string[]> {
  return (await run<{ id: string }>(db, PERSONS_BY_NAME, [companyId, likePattern, limit])).map((r) => r.id);
}

/** The oldest person holding a phone of these digits. */
export async function personIdByPhone(db: Db, companyId: string, digits: string[]): Promise<string | null> {
  const [row] = await run<Pick<PersonContact, 'personId'>>(db, PERSON_BY_PHONE, [companyId, digits]);
  return row?.personId ?? null;
}
