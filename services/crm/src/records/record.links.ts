import type { EntityManager } from '@svc/platform/db/orm';
import { invalidField, isUuid, notFound } from '@svc/platform/errors';
import { codeOf } from '@svc/platform/numbers';
import { User } from '../companies/company.entity.js';
import { nextCodeSql } from '../companies/plan.js';
import { Organization, Person } from '../contacts/contact.entity.js';
import { Deal } from '../deals/deal.entity.js';
import type { UserSummary } from '../sales/sales.summaries.js';

/**
 * What deliveries and contracts share: the acting user of an admin action, a record named by id or code, the
 * links to crm's deals, organizations and persons, and their summaries in snapshots (decisions 0080, 0081). A
 * contract's link to a delivery is `deliveries/delivery.links.ts`: records sit below deliveries (decision 0091).
 */

/** The filter of record `ref` (UUID or numeric `code`) of the company; anything else names nothing (404 `label`). */
export function refWhere(
  companyId: string,
  ref: string,
  label: string,
): { companyId: string; id: string } | { companyId: string; code: number } {
  if (isUuid(ref)) return { companyId, id: ref.toLowerCase() };
  const code = codeOf(ref);
  if (code !== null) return { companyId, code };
  throw notFound(label);
}

/** The user acting through the admin API: a user of the company, else a 400 on `user_id`. */
export async function actingUser(em: EntityManager, companyId: string, userId: string): Promise<User> {
  const user = await em.findOne(User, { id: userId, companyId });
  if (!user) throw invalidField('user_id', 'no such user in the company');
  return user;
}

/** A responsible user: active and not archived, of the company, else a 400 on `field`. */
export async function responsibleUser(em: EntityManager, companyId: string, userId: string, field = 'responsible_id'): Promise<User> {
  const user = await em.findOne(User, { id: userId, companyId });
  if (!user?.active || user.archived) throw invalidField(`${field}`, 'no active user of the company');
  return user;
}

/** The next `code` of a per-company sequence, taken in the caller's transaction (no gaps: it rolls back with it). */
export async function nextCode(em: EntityManager, companyId: string, entity: string): Promise<number> {
  const [row] = await em.execute<{ value: string | number }[]>(nextCodeSql('?', entity), [companyId]);
  return Number(row?.value);
}

export interface LinkIds {
  deal_id?: string | null | undefined;
  organization_id?: string | null | undefined;
  person_id?: string | null | undefined;
}

/** Each link sent must name a record of the company: an unknown or another company's id is a 400 on its field. */
export async function checkLinks(em: EntityManager, companyId: string, links: LinkIds): Promise<void> {
  const missing = async (count: Promise<number>, field: string) => {
    if ((await count) === 0) throw invalidField(`${field}`, `no such ${field.slice(0, -3)} in the company`);
  };
  if (links.deal_id) await missing(em.count(Deal, { id: links.deal_id, companyId }), 'deal_id');
  if (links.organization_id) await missing(em.count(Organization, { id: links.organization_id, companyId }), 'organization_id');
  if (links.person_id) await missing(em.count(Person, { id: links.person_id, companyId }), 'person_id');
}

/** The summaries a delivery or contract snapshot shows for its links. */
export interface LinkSummaries {
  users: Map<string, UserSummary>;
  deals: Map<string, { id: string; code: number; title: string; status: number }>;
  organizations: Map<string, { id: string; name: string; logo: string | null }>;
  persons: Map<string, { id: string; name: string }>;
}

/** Loads, in four queries, the users, deals, organizations and persons a set of snapshots point at. */
export async function linkSummaries(
  em: EntityManager,
  companyId: string,
  ids: {
    users: (string | null)[];
    deals: (string | null)[];
    organizations: (string | null)[];
    persons: (string | null)[];
  },
): Promise<LinkSummaries> {
  const present = (list: (string | null)[]) => [...new Set(list.filter((x): x is string => x !== null))];
  const [users, deals, organizations, persons] = await Promise.all([
    present(ids.users).length ? em.find(User, { companyId, id: { $in: present(ids.users) } }) : [],
    present(ids.deals).length ? em.find(Deal, { companyId, id: { $in: present(ids.deals) } }) : [],
    present(ids.organizations).length ? em.find(Organization, { companyId, id: { $in: present(ids.organizations) } }) : [],
    present(ids.persons).length ? em.find(Person, { companyId, id: { $in: present(ids.persons) } }) : [],
  ]);
  return {
    users: new Map(users.map((u) => [u.id, { id: u.id, name: u.name, avatar: u.avatar ?? null }])),
    deals: new Map(deals.map((d) => [d.id, { id: d.id, code: d.code, title: d.title, status: d.status }])),
    organizations: new Map(organizations.map((o) => [o.id, { id: o.id, name: o.name, logo: o.logo ?? null }])),
    persons: new Map(persons.map((p) => [p.id, { id: p.id, name: p.name }])),
  };
}

/** The summary of `id` in `map`, or null (no link, or a record removed since). */
export const summaryOf = <T>(map: Map<string, T>, id: string | null | undefined): T | null => (id ? (map.get(id) ?? null) : null);
