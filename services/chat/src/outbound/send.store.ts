import { tableOf } from '@svc/platform/db/entity-table';
import type { Queryable } from '@svc/platform/db/native';
import { ChatParticipant } from '../chats/chat.entity.js';
import { type MessageRead, messageJson, type Settlement } from '../messages/message.store.js';

const PARTICIPANT_COLUMNS = tableOf(ChatParticipant).columnList(['chatId', 'agentId', 'companyId', 'createdAt']);

/** The parts of a send's settle besides the message (decision 0236). */
export interface SendSettle {
  chatId: string;
  companyId: string;
  /** The message's creation: the chat's activity moves to it. */
  at: Date;
  /** The sending agent: takes the chat when nobody has it, and takes part in it. */
  agentId: string | null;
  /** The outbox insert of the send's events (OutboxWriter.part from `$11`). */
  events: { text: string; values: unknown[] };
}

/**
 * A send's settle as one statement, so one implicit transaction: the message's outcome, its chat (last message,
 * activity, one more unreplied message, taken by the agent when unassigned), the agent as participant, the chat's
 * active flows paused, and the events. Returns the message as settled.
 */
export async function settleSend(db: Queryable, id: string, r: Settlement, s: SendSettle): Promise<MessageRead> {
  const { rows } = await db.query<{ m: MessageRead }>({
    name: 'messages_settle_send',
    text: `with settled as (
        update messages set wamid = $2, status = $3, error_code = $4, error_message = $5, media = coalesce($6, media), updated_at = now()
        where id = $1 returning *),
      chat as (
        update chats set last_message_id = $1, last_activity_at = greatest(last_activity_at, $8), trailing_outbound_count = trailing_outbound_count + 1,
          started_by = coalesce(started_by, 'COMPANY'), assigned_agent_id = coalesce(assigned_agent_id, $9), updated_at = now()
        where id = $7),
      joined as (
        insert into chat_participants (${PARTICIPANT_COLUMNS}) select $7, $9, $10, now() where $9::uuid is not null
        on conflict do nothing),
      paused as (update flow_sessions set status = 'PAUSED', last_activity_at = now() where chat_id = $7 and status = 'ACTIVE'),
      events as (${s.events.text})
      select ${messageJson('settled')} as m from settled`,
    values: [
      id,
      r.wamid,
      r.status,
      r.errorCode,
      r.errorMessage,
      r.media ? JSON.stringify(r.media) : null,
      s.chatId,
      s.at,
      s.agentId,
      s.companyId,
      ...s.events.values,
    ],
  });
  return rows[0]!.m;
}
