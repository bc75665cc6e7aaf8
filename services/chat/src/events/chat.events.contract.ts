import { type EventContract, event } from '@svc/platform/http/contract';
import { z } from 'zod';

const record = z.object({ id: z.string(), title: z.string(), status: z.number().int() });
const messageFields = {
  id: z.string(),
  chat_id: z.string(),
  type: z.string(),
  origin: z.enum(['INBOUND', 'API_OUTBOUND', 'MOBILE_APP_ECHO', 'SYSTEM']),
  from_me: z.boolean(),
  sent_via: z.enum(['CONTACT', 'API', 'MOBILE_DEVICE', 'SYSTEM']),
  status: z.string(),
  error_code: z.number().int().nullable(),
  error_message: z.string().nullable(),
  body_text: z.string().nullable(),
  transcription: z.string().nullable(),
  content_payload: z.record(z.string(), z.unknown()).nullable(),
  meta_timestamp: z.string().nullable(),
  created_at: z.string(),
  is_history: z.boolean(),
  history_phase: z.null(),
  history_chunk_order: z.null(),
  history_progress: z.null(),
  is_media_placeholder: z.boolean(),
  is_forwarded: z.boolean(),
  whatsapp_ai_agent_id: z.string().nullable(),
  reactions: z.array(z.record(z.string(), z.unknown())),
  agent: z.record(z.string(), z.unknown()).nullable(),
  user: z.record(z.string(), z.unknown()).nullable(),
  media: z.record(z.string(), z.unknown()).nullable(),
  call: z.null(),
  /** The quoted message's own view with its `page`, when the message quotes one. */
  quoted_message: z.record(z.string(), z.unknown()).nullable().optional(),
  associated_leads: z.array(record).optional(),
  associated_deals: z.array(record).optional(),
};

/** The chat events (spec, Chat payloads; docs/chat.md). */
export const chatEvents: readonly EventContract[] = [
  event({
    key: 'chat.message_sent',
    summary: 'The service sent a message in a chat (API, scheduled or initial template) that the provider did not refuse',
    payload: z.object(messageFields).meta({ id: 'ChatMessageSentPayload' }),
  }),
  event({
    key: 'chat.message_received',
    summary: 'A message without media arrived in a chat (not reactions, edits or history)',
    payload: z
      .object({
        ...messageFields,
        agent_id: z.string().nullable(),
        wamid: z.string().nullable(),
        ref_wamid: z.string().nullable(),
        call_id: z.null(),
        deleted_at: z.null(),
        business_reply_actor_user_id: z.null(),
        business_reply_capture_status: z.null(),
      })
      .meta({ id: 'ChatMessageReceivedPayload' }),
  }),
  event({
    key: 'chat.message_status_updated',
    summary:
      'The provider reported a new status of a message the company sent (an extension of the spec, decision 0179); a status never goes back, failed is final',
    payload: z
      .object({
        message_id: z.string().meta({ format: 'uuid' }),
        chat_id: z.string().meta({ format: 'uuid' }),
        status: z.enum(['sent', 'delivered', 'read', 'failed']),
        previous_status: z
          .string()
          .meta({ description: 'The status the message had before: processing, delivery_unknown, sent or delivered' }),
        at: z.string().meta({ format: 'date-time', description: "The provider's time of the status" }),
        error: z
          .object({ code: z.number().int(), title: z.string() })
          .optional()
          .meta({ description: "On failed: the provider's error code and title" }),
      })
      .meta({ id: 'ChatMessageStatusUpdatedPayload' }),
  }),
];
