import { invalidField, isUuid, notFound } from '@svc/platform/errors';
import type { GrpcServiceRegistration } from '@svc/platform/grpc/server';
import { unary } from '@svc/platform/grpc/server';
import type { Logger } from '@svc/platform/logging';
import {
  CrmServiceService,
  type GetCompanyRequest,
  type GetCompanyResponse,
  type GetUserRequest,
  type GetUserResponse,
  type ResolveKeyRequest,
  type ResolveKeyResponse,
  type User as UserMessage,
} from '@svc/proto/crm/v1/crm';
import type { PoolOf } from '../db.js';
import type { User } from './company.entity.js';
import { requireCompany, requireUser } from './company.service.js';
import type { KeyLookups } from './key-lookups.js';

const opt = <T>(v: T | null | undefined): T | undefined => v ?? undefined;
const userMessage = (u: User): UserMessage => ({
  id: u.id,
  company_id: u.companyId,
  name: u.name,
  email: u.email,
  avatar: opt(u.avatar),
  active: u.active,
  archived: u.archived,
});

/** `keys` answers ResolveKey on its own connections (decision 0145); the other methods use the service's pool. */
export function crmGrpc(logger: Logger, pool: PoolOf, keys: KeyLookups): GrpcServiceRegistration {
  return {
    definition: CrmServiceService,
    implementation: {
      resolveKey: unary<ResolveKeyRequest, ResolveKeyResponse>(logger, async (req) => {
        if (!/^[0-9a-f]{64}$/.test(req.key_hash)) throw invalidField('key_hash', 'must be a hex SHA-256');
        return keys.resolve(req.key_hash);
      }),
      getCompany: unary<GetCompanyRequest, GetCompanyResponse>(logger, async (req) => {
        const company = await requireCompany(await pool(), req.company_id);
        return {
          company: {
            id: company.id,
            name: company.name,
            plan_valid_until: opt(company.planValidUntil?.toISOString()),
            master_user_id: company.masterUserId,
          },
        };
      }),
      getUser: unary<GetUserRequest, GetUserResponse>(logger, async (req) => {
        if (!isUuid(req.company_id)) throw notFound('User');
        return { user: userMessage(await requireUser(await pool(), req.company_id, req.user_id)) };
      }),
    },
  };
}
