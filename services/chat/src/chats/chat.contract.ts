import { idempotencyKeyHeader, route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { listMessagesQuery } from '../messages/message.schema.js';
import { responsibleBody, templatesQuery, typingBody } from './chat.actions.js';
import { CHAT_PERMISSIONS } from './chat.permissions.js';
import { listChatsQuery } from './chat.schema.js';

/** Decision 0100; sends and scheduled messages declare theirs beside their routes. */
export const tags = ['Chats'];
const P = CHAT_PERMISSIONS;
export const chatId = z.object({ id: z.string().meta({ description: 'The chat’s UUID.' }) });
export const ok = (description: string) => ({ 200: { description } });
export const idempotent = idempotencyKeyHeader(
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
