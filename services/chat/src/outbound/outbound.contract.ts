import { route } from '@svc/platform/http/contract';
import { chatId, idempotent, tags } from '../chats/chat.contract.js';
import { CHAT_PERMISSIONS as P } from '../chats/chat.permissions.js';
import { createChatBody } from './outbound.create.js';
import { sendMessageBody, sendMultipart } from './outbound.schema.js';

/** The contracts of the routes that send (decision 0100), served by outbound.http.ts. */
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
