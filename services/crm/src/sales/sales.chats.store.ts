import { run, statement } from '@svc/platform/db/native';
import type { Pool, PoolClient } from 'pg';
import type { UserSummary } from './sales.summaries.js';

const usersForChats = statement(
  'crm_users_for_chat_fields',
  'select id, name, avatar from users where company_id = $1 and id = any($2::uuid[])',
);

export function chatResponsibles(db: Pool | PoolClient, companyId: string, ids: string[]): Promise<UserSummary[]> {
  return run<UserSummary>(db, usersForChats, [companyId, ids]);
}
