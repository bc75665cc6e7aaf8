import { iso } from '../messages/message.view.js';

export interface ScheduledRow {
  id: string;
  company_id: string;
  chat_id: string;
  status: string;
  message_kind: string;
  cancel_reason: string | null;
  cancel_reason_description: string | null;
  failure_reason: string | null;
  cancel_on_inbound: boolean;
  scheduled_at: Date | string;
  processed_at: Date | string | null;
  sent_at: Date | string | null;
  canceled_at: Date | string | null;
  created_by_user_id: string | null;
  sender_agent_id: string | null;
  canceled_by_user_id: string | null;
  payload: Record<string, unknown>;
  attachments: unknown[];
  sent_message_ids: string[];
  whatsapp_ai_agent_id: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The spec's Scheduled message. */
export const scheduledView = (r: ScheduledRow) => ({
  id: r.id,
  chat_id: r.chat_id,
  company_id: r.company_id,
  is_scheduled: true,
  status: r.status,
  message_kind: r.message_kind,
  cancel_reason: r.cancel_reason,
  cancel_reason_description: r.cancel_reason_description,
  failure_reason: r.failure_reason,
  cancel_on_inbound: r.cancel_on_inbound,
  scheduled_at: iso(r.scheduled_at),
  processed_at: iso(r.processed_at),
  sent_at: iso(r.sent_at),
  canceled_at: iso(r.canceled_at),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  created_by_user_id: r.created_by_user_id,
  sender_agent_id: r.sender_agent_id,
  canceled_by_user_id: r.canceled_by_user_id,
  payload: r.payload,
  attachments: r.attachments,
  sent_message_ids: r.sent_message_ids,
  whatsapp_ai_agent_id: r.whatsapp_ai_agent_id,
});
