import { type EventContract, event, idempotencyKeyHeader, route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { listMessagesQuery } from '../messages/message.schema.js';
import { sendMessageBody, sendMultipart } from '../messages/send.schema.js';
import { cancelBody, listScheduledQuery, scheduleBody, scheduleMultipart } from '../scheduled/scheduled.schema.js';
import { responsibleBody, templatesQuery, typingBody } from './chat.actions.js';
import { createChatBody } from './chat.create.js';
import { CHAT_PERMISSIONS } from './chat.permissions.js';
import { listChatsQuery } from './chat.schema.js';

/** The chat routes' contracts (decision 0100): what the chat routers serve and the OpenAPI document shows (docs/chat.md). */
const tags = ['Chats'];
const P = CHAT_PERMISSIONS;
const chatId = z.object({ id: z.string().meta({ description: 'The chat’s UUID.' }) });
const ok = (description: string) => ({ 200: { description } });
const idempotent = idempotencyKeyHeader(
  'Makes the write run once (up to 255 characters): a retry with the same key answers the first answer without ' +
    'sending again; 409 while it runs, or when it failed after the provider may have received the message.',
);

export const listChats = route({
  method: 'get',
  path: '/chats',
  operationId: 'listChats',
  summary: 'List WhatsApp and Instagram chats',
  description: 'One order for both channels (last activity, newest first, then id); `cursor` continues after a page (docs/chat.md).',
  tags,
  permission: P.read,
  query: listChatsQuery,
  responses: ok('`{total, records, next_cursor}`'),
});

export const createChat = route({
  method: 'post',
  path: '/chats',
  operationId: 'createChat',
  summary: 'Create or reuse a WhatsApp chat and send its initial template',
  tags,
  headers: idempotent,
  errors: [409],
  permission: P.create,
  body: createChatBody,
  responses: { 201: { description: 'The chat summary, the template as its last message.' } },
});

export const unreadSummary = route({
  method: 'get',
  path: '/chats/unread-summary',
  operationId: 'chatUnreadSummary',
  summary: 'Unread chats and messages, per channel account and in total',
  tags,
  permission: P.read,
  responses: ok('`{total: {unread_chats, unread_messages}, channel_accounts: [...]}`'),
});

export const getChat = route({
  method: 'get',
  path: '/chats/{id}',
  operationId: 'getChat',
  summary: 'Chat detail (WhatsApp or Instagram)',
  tags,
  permission: P.read,
  params: chatId,
  responses: ok('The chat detail of its channel.'),
});

export const assignableAgents = route({
  method: 'get',
  path: '/chats/{id}/assignable-agents',
  operationId: 'chatAssignableAgents',
  summary: 'Agents that can act on the chat’s number or account',
  tags,
  permission: P.read,
  params: chatId,
  responses: ok('`{total, records: [{agent_id, status, user}]}`'),
});

export const listMessages = route({
  method: 'get',
  path: '/chats/{id}/messages',
  operationId: 'listChatMessages',
  summary: 'Messages of a chat',
  tags,
  permission: P.read,
  params: chatId,
  query: listMessagesQuery,
  responses: ok('`{total, records}`; a quoted message carries its `page`.'),
});

export const sendMessage = route({
  method: 'post',
  path: '/chats/{id}/messages',
  operationId: 'sendChatMessage',
  summary: 'Send a message (JSON, or multipart/form-data with files streamed to the provider)',
  description:
    'Multipart: the same fields (template and template_fields as JSON text) before the files; each file up to 100 MB, audio 16 MB.',
  tags,
  headers: idempotent,
  errors: [409],
  permission: P.write,
  params: chatId,
  body: sendMessageBody,
  streamedBody: { contentType: 'multipart/form-data', schema: sendMultipart },
  responses: { 201: { description: '`{records}`: one per message sent; a failed file is a record with status failed.' } },
});

export const typing = route({
  method: 'post',
  path: '/chats/{id}/messages/typing',
  operationId: 'chatTyping',
  summary: 'Typing indicator at the provider',
  tags,
  permission: P.write,
  params: chatId,
  body: typingBody,
  responses: ok('`{chat_id, is_typing, reference_wamid, dispatched_at}`'),
});

export const deleteMessage = route({
  method: 'delete',
  path: '/chats/{id}/messages/{messageId}',
  operationId: 'deleteChatMessage',
  summary: 'Delete a message the company sent',
  tags,
  permission: P.delete,
  params: z.object({ id: z.string(), messageId: z.string().meta({ description: 'The local message UUID.' }) }),
  responses: ok('The message with status deleted; a provider refusal is 400.'),
});

export const readChat = route({
  method: 'post',
  path: '/chats/{id}/read',
  operationId: 'readChat',
  summary: 'Mark a chat read',
  tags,
  permission: P.update,
  params: chatId,
  responses: ok('The chat.'),
});

export const setResponsible = route({
  method: 'patch',
  path: '/chats/{id}/responsible',
  operationId: 'setChatResponsible',
  summary: 'Assign the chat (and optionally the person’s open leads and deals) to a user',
  tags,
  permission: P.update,
  params: chatId,
  body: responsibleBody,
  responses: ok('The chat.'),
});

export const removeParticipant = route({
  method: 'delete',
  path: '/chats/{id}/participants/{userId}',
  operationId: 'removeChatParticipant',
  summary: 'Remove a participant',
  tags,
  permission: P.update,
  params: z.object({ id: z.string(), userId: z.string() }),
  responses: ok('The chat without that participant.'),
});

export const listTemplates = route({
  method: 'get',
  path: '/chats/{id}/templates',
  operationId: 'listChatTemplates',
  summary: 'Approved templates of the chat’s number',
  tags,
  permission: P.read,
  params: chatId,
  query: templatesQuery,
  responses: ok('`{data, paging: {cursors: {before, after}}}`'),
});

export const listScheduled = route({
  method: 'get',
  path: '/chats/{id}/scheduled-messages',
  operationId: 'listScheduledMessages',
  summary: 'Scheduled messages of a chat',
  tags,
  permission: P.read,
  params: chatId,
  query: listScheduledQuery,
  responses: ok(
    '`{total, records}` in scheduled order, paged by `skip` and `take` (default 20, at most 100); `total` counts the whole list.',
  ),
});

export const scheduleMessage = route({
  method: 'post',
  path: '/chats/{id}/scheduled-messages',
  operationId: 'scheduleMessage',
  summary: 'Schedule a WhatsApp message (JSON, or multipart/form-data with files kept until the send)',
  description:
    'Multipart: the same fields (template, template_fields and cancel_on_inbound as JSON text) before the files; each file up to 100 MB, audio 16 MB; files are sent as open messages, so inside session_expires_at.',
  tags,
  headers: idempotent,
  errors: [409],
  permission: P.write,
  params: chatId,
  body: scheduleBody,
  streamedBody: { contentType: 'multipart/form-data', schema: scheduleMultipart },
  responses: { 201: { description: 'The scheduled message (PENDING).' } },
});

export const cancelScheduled = route({
  method: 'post',
  path: '/chats/{id}/scheduled-messages/{sid}/cancel',
  operationId: 'cancelScheduledMessage',
  summary: 'Cancel a pending scheduled message',
  tags,
  permission: P.write,
  params: z.object({ id: z.string(), sid: z.string() }),
  body: cancelBody,
  responses: ok('The scheduled message, CANCELED with USER_REQUEST.'),
});

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
