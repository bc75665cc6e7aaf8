import type { Queryable } from '../chats/chat.store.js';

/**
 * The contact wrote: pending sends of the chat that asked to wait for silence are canceled with cancel_reason
 * CHAT_INTERACTION (the spec leaves the value open; decision 0063).
 */
export async function cancelOnInbound(db: Queryable, chatId: string, at: Date): Promise<void> {
  await db.query({
    name: 'scheduled_cancel_on_inbound',
    text: `update scheduled_messages set status = 'CANCELED', cancel_reason = 'CHAT_INTERACTION', canceled_at = $2, updated_at = $2,
      cancel_reason_description = 'the contact wrote before the scheduled time'
      where chat_id = $1 and status = 'PENDING' and cancel_on_inbound`,
    values: [chatId, at],
  });
}
