import { tableOf } from '@svc/platform/db/entity-table';
import { run, statement } from '@svc/platform/db/native';
import { Tag } from '../catalog/catalog.entity.js';
import { User } from '../companies/company.entity.js';
import { Organization, Person } from '../contacts/contact.entity.js';
import { Customer } from '../customers/customer.entity.js';
import type { Db } from '../db.js';
import { Deal } from '../deals/deal.entity.js';
import { Delivery } from '../deliveries/delivery.entity.js';
import { Lead } from '../leads/lead.entity.js';
import { dealVisibleSql, leadVisibleSql } from '../sales/sales.visibility.js';

/** The summaries other contexts show of crm's records (crm.v1.RecordService). */

const DEALS = tableOf(Deal);
const ORGANIZATIONS = tableOf(Organization);
const PERSONS = tableOf(Person);
const PERSON_SUMMARY = ['id', 'name'] as const;
type PersonSummary = Pick<Person, (typeof PERSON_SUMMARY)[number]>;

const LEADS = tableOf(Lead);
const TAGS = tableOf(Tag);
const USERS = tableOf(User);
const DELIVERIES = tableOf(Delivery);
const CUSTOMERS = tableOf(Customer);
const TITLED = ['id', 'title', 'code'] as const;
const ORGANIZATION_BRIEF = ['id', 'name', 'legalName'] as const;
const TAG_BRIEF = ['id', 'name', 'colorBackground', 'colorForeground'] as const;
const USER_BRIEF = ['id', 'name', 'avatar', 'email', 'active', 'archived'] as const;
const DELIVERY_BRIEF = ['id', 'title', 'code', 'status'] as const;
const CUSTOMER_BRIEF = ['id', 'code', 'type', 'status'] as const;

const list = (json: string, from: string) => `coalesce((select json_agg(${json}) from ${from}), '[]'::json)`;
const ofIds = (alias: string, param: string) => `${alias}.company_id = $1::uuid and ${alias}.id = any(${param}::uuid[])`;

// One round trip for every type; a type with no ids costs an index probe with an empty array. Deals follow the
// visibility rule of leads; deliveries and customers are seen by every user of the company.
const SUMMARIES = statement(
  'crm_record_summaries',
  `select
  ${list(LEADS.json('l', TITLED), `leads l where ${ofIds('l', '$3')} and ${leadVisibleSql('l', '$2::uuid')}`)} as leads,
  ${list(DEALS.json('d', TITLED), `deals d where ${ofIds('d', '$8')} and ${dealVisibleSql('d', '$2::uuid')}`)} as deals,
  ${list(PERSONS.json('p', PERSON_SUMMARY), `persons p where ${ofIds('p', '$4')}`)} as persons,
  ${list(ORGANIZATIONS.json('o', ORGANIZATION_BRIEF), `organizations o where ${ofIds('o', '$5')}`)} as organizations,
  ${list(TAGS.json('t', TAG_BRIEF), `tags t where ${ofIds('t', '$6')}`)} as tags,
  ${list(USERS.json('u', USER_BRIEF), `users u where ${ofIds('u', '$7')}`)} as users,
  ${list(DELIVERIES.json('v', DELIVERY_BRIEF), `deliveries v where ${ofIds('v', '$9')}`)} as deliveries,
  ${list(
    `${CUSTOMERS.json('c', CUSTOMER_BRIEF)}::jsonb || jsonb_build_object(
      'person', (select ${PERSONS.json('p', PERSON_SUMMARY)} from persons p where p.company_id = c.company_id and p.id = c.person_id),
      'organization', (select ${ORGANIZATIONS.json('o', ORGANIZATION_BRIEF)} from organizations o
                        where o.company_id = c.company_id and o.id = c.organization_id))`,
    `customers c where ${ofIds('c', '$10')}`,
  )} as customers`,
);

type OrganizationBrief = Pick<Organization, (typeof ORGANIZATION_BRIEF)[number]>;

export interface RecordSummaryRows {
  leads: Pick<Lead, (typeof TITLED)[number]>[];
  deals: Pick<Deal, (typeof TITLED)[number]>[];
  persons: PersonSummary[];
  organizations: OrganizationBrief[];
  tags: Pick<Tag, (typeof TAG_BRIEF)[number]>[];
  users: Pick<User, (typeof USER_BRIEF)[number]>[];
  deliveries: Pick<Delivery, (typeof DELIVERY_BRIEF)[number]>[];
  customers: (Pick<Customer, (typeof CUSTOMER_BRIEF)[number]> & { person: PersonSummary | null; organization: OrganizationBrief | null })[];
}

export interface SummaryIds {
  leads: string[];
  deals: string[];
  persons: string[];
  organizations: string[];
  tags: string[];
  users: string[];
  deliveries: string[];
  customers: string[];
}

/** The records of these ids of the company, leads and deals only when `viewerId` may see them. */
export async function recordSummaries(db: Db, companyId: string, viewerId: string, ids: SummaryIds): Promise<RecordSummaryRows> {
  const [row] = await run<RecordSummaryRows>(db, SUMMARIES, [
    companyId,
    viewerId,
    ids.leads,
    ids.persons,
    ids.organizations,
    ids.tags,
    ids.users,
    ids.deals,
    ids.deliveries,
    ids.customers,
  ]);
  return row as RecordSummaryRows;
}
