import { credentials } from '@grpc/grpc-js';
import { callUnary } from '@svc/platform/grpc/server';
import { type PersonContactDetail, type PersonDetail, type PersonRecord, PersonServiceClient } from '@svc/proto/crm/v1/persons';
import { RecordServiceClient, RecordType, type UserSummary } from '@svc/proto/crm/v1/records';
import { Recent } from './recent.js';

/** Milliseconds: a chat answer never waits on crm longer. */
const DEADLINE_MS = 2000;

/** Milliseconds a sender's summary is reused (decision 0239), as long as CrmPeer reuses a company's plan. */
const SENDER_TTL_MS = 2000;

export interface UserView {
  id: string;
  name: string;
  avatar: string | null;
}

export const userView = (u: UserSummary | undefined, id: string): UserView =>
  u ? { id: u.id, name: u.name, avatar: u.avatar ?? null } : { id, name: '', avatar: null };

/** Persons and users live in crm; chat keeps only their ids. */
export class CrmPeople {
  private readonly persons: PersonServiceClient;
  private readonly records: RecordServiceClient;
  private readonly senders = new Recent<Map<string, UserSummary>>(SENDER_TTL_MS);

  constructor(address: string) {
    this.persons = new PersonServiceClient(address, credentials.createInsecure());
    this.records = new RecordServiceClient(address, credentials.createInsecure());
  }

  async personsById(companyId: string, ids: Iterable<string>): Promise<Map<string, PersonDetail>> {
    const list = [...new Set(ids)];
    if (!list.length) return new Map();
    const r = await callUnary(this.persons, this.persons.getPersons, { company_id: companyId, person_ids: list }, DEADLINE_MS);
    return new Map(r.persons.map((p) => [p.id, p]));
  }

  async contact(companyId: string, contactId: string): Promise<{ contact: PersonContactDetail; personId: string } | null> {
    const r = await callUnary(this.persons, this.persons.getPersonContact, { company_id: companyId, contact_id: contactId }, DEADLINE_MS);
    return r.contact && r.person_id ? { contact: r.contact, personId: r.person_id } : null;
  }

  async personIdsByName(companyId: string, term: string, limit = 1000): Promise<string[]> {
    const r = await callUnary(this.persons, this.persons.findPersonsByName, { company_id: companyId, term, limit }, DEADLINE_MS);
    return r.person_ids;
  }

  async personByPhone(companyId: string, digits: string[]): Promise<string | null> {
    const r = await callUnary(this.persons, this.persons.findPersonByPhone, { company_id: companyId, digits }, DEADLINE_MS);
    return r.person_id ?? null;
  }

  async personRecords(companyId: string, personId: string): Promise<{ leads: PersonRecord[]; deals: PersonRecord[] }> {
    return callUnary(this.persons, this.persons.getPersonRecords, { company_id: companyId, person_id: personId }, DEADLINE_MS);
  }

  /** crm makes the user responsible of the person's open leads and/or deals (its own update path and events). */
  async assignPersonRecords(req: {
    companyId: string;
    actorUserId: string;
    personId: string;
    userId: string;
    leads: boolean;
    deals: boolean;
  }) {
    return callUnary(
      this.persons,
      this.persons.assignPersonRecords,
      {
        company_id: req.companyId,
        actor_user_id: req.actorUserId,
        person_id: req.personId,
        responsible_user_id: req.userId,
        leads: req.leads,
        deals: req.deals,
      },
      // Several records are each updated with their events: a longer deadline than a read.
      10_000,
    );
  }

  /** Users of the company by id (name, avatar, active); unknown ids and other companies' users are left out. */
  async users(companyId: string, ids: Iterable<string>): Promise<Map<string, UserSummary>> {
    const list = [...new Set(ids)];
    if (!list.length) return new Map();
    const r = await callUnary(
      this.records,
      this.records.getRecordSummaries,
      { company_id: companyId, viewer_user_id: list[0]!, refs: list.map((id) => ({ type: RecordType.RECORD_TYPE_USER, id })) },
      DEADLINE_MS,
    );
    return new Map(r.users.map((u) => [u.id, u]));
  }

  /**
   * The sending user's summary for a send's answer and event, reused for a short while (decision 0239): crm applies
   * no visibility to users, and a rename shows in sends within SENDER_TTL_MS. Lists and details still ask each time.
   */
  sender(companyId: string, userId: string): Promise<Map<string, UserSummary>> {
    return this.senders.get(`${companyId}:${userId}`, () => this.users(companyId, [userId]));
  }

  close(): void {
    this.persons.close();
    this.records.close();
  }
}
