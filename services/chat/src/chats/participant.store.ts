import { tableOf } from '@svc/platform/db/entity-table';
import type { Queryable } from '@svc/platform/db/native';
import { ChatParticipant } from './chat.entity.js';

const PARTICIPANT_COLUMNS = tableOf(ChatParticipant).columnList(['chatId', 'agentId', 'companyId', 'createdAt']);

/** The agent takes part in the chat (again, harmlessly, when it does already). */
export async function addParticipant(db: Queryable, companyId: string, chatId: string, agentId: string): Promise<void> {
  await db.query({
    name: 'chat_participants_on_send',
    text: `insert into chat_participants (${PARTICIPANT_COLUMNS}) values ($1, $2, $3, now()) on conflict do nothing`,
    values: [chatId, agentId, companyId],
  });
}

export async function addParticipants(db: Queryable, companyId: string, chatId: string, agentIds: string[]): Promise<void> {
  await db.query(`insert into chat_participants (${PARTICIPANT_COLUMNS}) select $1, a, $2, now() from unnest($3::uuid[]) a`, [
    chatId,
    companyId,
    agentIds,
  ]);
}

/** The user's agents leave the chat; their ids come back (none when the user took no part). */
export async function removeUserFromChat(db: Queryable, companyId: string, chatId: string, userId: string): Promise<string[]> {
  const { rows } = await db.query<{ agentId: string }>(
    `delete from chat_participants p using agents a where p.chat_id = $1 and p.agent_id = a.id and a.company_id = $2 and a.user_id = $3
     returning p.agent_id as "agentId"`,
    [chatId, companyId, userId],
  );
  return rows.map((r) => r.agentId);
}
