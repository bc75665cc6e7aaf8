import { iso } from '../messages/message.view.js';
import type { StoredScheduled } from './scheduled.store.js';

/** The spec's Scheduled message. */
export const scheduledView = (r: StoredScheduled) => ({
  id: r.id,
  chat_id: r.chatId,
  company_id: r.companyId,
  is_scheduled: true,
  status: r.status,
  message_kind: r.messageKind,
  cancel_reason: r.cancelReason,
  cancel_reason_description: r.cancelReasonDescription,
  failure_reason: r.failureReason,
  cancel_on_inbound: r.cancelOnInbound,
  scheduled_at: iso(r.scheduledAt),
  processed_at: iso(r.processedAt),
  sent_at: iso(r.sentAt),
  canceled_at: iso(r.canceledAt),
  created_at: iso(r.createdAt),
  updated_at: iso(r.updatedAt),
  created_by_user_id: r.createdByUserId,
  sender_agent_id: r.senderAgentId,
  canceled_by_user_id: r.canceledByUserId,
  payload: r.payload,
  attachments: r.attachments,
  sent_message_ids: r.sentMessageIds,
  whatsapp_ai_agent_id: r.whatsappAiAgentId,
});
