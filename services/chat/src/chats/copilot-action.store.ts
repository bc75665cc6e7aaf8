import { type Stored, tableOf } from '@svc/platform/db/entity-table';
import type { Queryable } from '@svc/platform/db/native';
import { CopilotAction } from './chat.entity.js';

export type StoredCopilotAction = Stored<CopilotAction>;
const ACTION = tableOf(CopilotAction);

export async function pendingActionsOfChat(db: Queryable, companyId: string, chatId: string): Promise<StoredCopilotAction[]> {
  const { rows } = await db.query<StoredCopilotAction>({
    name: 'copilot_pending_of_chat',
    text: `select ${ACTION.select('a')} from copilot_actions a where a.company_id = $1 and a.chat_id = $2 and a.status = 'PENDING'
      order by a.created_at, a.id`,
    values: [companyId, chatId],
  });
  return rows;
}

const NEW_ACTION = [
  'id',
  'companyId',
  'chatId',
  'executionId',
  'agentId',
  'agentName',
  'actionKey',
  'status',
  'confidence',
  'requiresReview',
  'inputPayload',
  'outputPayload',
  'createdAt',
  'updatedAt',
] as const;

export async function insertCopilotAction(
  db: Queryable,
  a: Pick<StoredCopilotAction, Exclude<(typeof NEW_ACTION)[number], 'createdAt' | 'updatedAt'>>,
): Promise<void> {
  const now = new Date();
  await db.query(ACTION.insertSome(NEW_ACTION), [...NEW_ACTION.slice(0, -2).map((p) => a[p as keyof typeof a]), now, now]);
}
