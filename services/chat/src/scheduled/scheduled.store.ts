import type { Queryable } from '../chats/chat.store.js';
import { attachmentIds } from './scheduled.files.js';

/**
 * The contact wrote: pending sends of the chat that asked to wait for silence are canceled with cancel_reason
 * CHAT_INTERACTION (the spec leaves the value open; decision 0063).
 */
export async function cancelOnInbound(db: Queryable, chatId: string, at: Date): Promise<string[]> {
  const { rows } = await db.query<{ attachments: unknown[] }>({
    name: 'scheduled_cancel_on_inbound',
    text: `update scheduled_messages set status = 'CANCELED', cancel_reason = 'CHAT_INTERACTION', canceled_at = $2, updated_at = $2,
      cancel_reason_description = 'the contact wrote before the scheduled time'
      where chat_id = $1 and status = 'PENDING' and cancel_on_inbound returning attachments`,
    values: [chatId, at],
  });
  // The caller removes these files once its transaction commits.
  return rows.flatMap(attachmentIds);
}
