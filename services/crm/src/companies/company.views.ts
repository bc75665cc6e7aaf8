import { iso } from '@svc/platform/http/json';
import type { Company, IntegrationKey, User } from './company.entity.js';

export const companyView = (company: Company, master: User) => ({
  id: company.id,
  name: company.name,
  plan_valid_until: iso(company.planValidUntil),
  master_user: { id: master.id, name: master.name, email: master.email },
});

export const userView = (u: User) => ({
  id: u.id,
  name: u.name,
  email: u.email,
  avatar: u.avatar,
  active: u.active,
  archived: u.archived,
});

export const keyView = (k: IntegrationKey) => ({
  id: k.id,
  created_by_user_id: k.createdByUserId,
  permissions: k.permissions,
  allowed_domain: k.allowedDomain,
  valid_from: iso(k.validFrom),
  valid_until: iso(k.validUntil),
  active: k.active,
  rate_limit_per_minute: k.rateLimitPerMinute,
});
