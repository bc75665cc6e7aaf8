import { invalidField, isUuid, notFound } from '@svc/platform/errors';
import { codeOf } from '@svc/platform/numbers';
import type { User } from '../companies/company.entity.js';
import { findUser } from '../companies/company.store.js';
import type { Db } from '../db.js';
import type { UserSummary } from '../sales/sales.summaries.js';
import { type DealSummary, linkExists, linkedRecords, type OrganizationSummary, type PersonSummary } from './record.store.js';

export { nextCode } from './record.store.js';

/** Shared by deliveries and contracts (decisions 0080, 0081); records sit below deliveries (decision 0091). */

/** Anything but a UUID or numeric `code` names nothing (404 `label`). */
export type RecordRef = { companyId: string; id: string } | { companyId: string; code: number };

export function refWhere(companyId: string, ref: string, label: string): RecordRef {
  if (isUuid(ref)) return { companyId, id: ref.toLowerCase() };
  const code = codeOf(ref);
  if (code !== null) return { companyId, code };
  throw notFound(label);
}

export async function actingUser(db: Db, companyId: string, userId: string): Promise<User> {
  const user = await findUser(db, companyId, userId);
  if (!user) throw invalidField('user_id', 'no such user in the company');
  return user;
}

/** A responsible user: active and not archived, of the company, else a 400 on `field`. */
export async function responsibleUser(db: Db, companyId: string, userId: string, field = 'responsible_id'): Promise<User> {
  const user = await findUser(db, companyId, userId);
  if (!user?.active || user.archived) throw invalidField(`${field}`, 'no active user of the company');
  return user;
}

export interface LinkIds {
  deal_id?: string | null | undefined;
  organization_id?: string | null | undefined;
  person_id?: string | null | undefined;
}

/** Each link sent must name a record of the company: an unknown or another company's id is a 400 on its field. */
export async function checkLinks(db: Db, companyId: string, links: LinkIds): Promise<void> {
  const missing = async (found: Promise<boolean>, field: string) => {
    if (!(await found)) throw invalidField(`${field}`, `no such ${field.slice(0, -3)} in the company`);
  };
  if (links.deal_id) await missing(linkExists(db, 'deal', companyId, links.deal_id), 'deal_id');
  if (links.organization_id) await missing(linkExists(db, 'organization', companyId, links.organization_id), 'organization_id');
  if (links.person_id) await missing(linkExists(db, 'person', companyId, links.person_id), 'person_id');
}

export interface LinkSummaries {
  users: Map<string, UserSummary>;
  deals: Map<string, DealSummary>;
  organizations: Map<string, OrganizationSummary>;
  persons: Map<string, PersonSummary>;
}

export async function linkSummaries(
  db: Db,
  companyId: string,
  ids: {
    users: (string | null)[];
    deals: (string | null)[];
    organizations: (string | null)[];
    persons: (string | null)[];
  },
): Promise<LinkSummaries> {
  const present = (list: (string | null)[]) => [...new Set(list.filter((x): x is string => x !== null))];
  const { users, deals, organizations, persons } = await linkedRecords(db, companyId, {
    users: present(ids.users),
    deals: present(ids.deals),
    organizations: present(ids.organizations),
    persons: present(ids.persons),
  });
  return {
    users: new Map(users.map((u) => [u.id, { id: u.id, name: u.name, avatar: u.avatar ?? null }])),
    deals: new Map(deals.map((d) => [d.id, { id: d.id, code: d.code, title: d.title, status: d.status }])),
    organizations: new Map(organizations.map((o) => [o.id, { id: o.id, name: o.name, logo: o.logo ?? null }])),
    persons: new Map(persons.map((p) => [p.id, { id: p.id, name: p.name }])),
  };
}

/** Null: no link, or a record removed since. */
export const summaryOf = <T>(map: Map<string, T>, id: string | null | undefined): T | null => (id ? (map.get(id) ?? null) : null);
