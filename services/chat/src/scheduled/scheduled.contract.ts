import { route } from '@svc/platform/http/contract';
import { z } from 'zod';
import { chatId, idempotent, ok, tags } from '../chats/chat.contract.js';
import { CHAT_PERMISSIONS as P } from '../chats/chat.permissions.js';
import { cancelBody, listScheduledQuery, scheduleBody, scheduleMultipart } from './scheduled.schema.js';

/** The contracts of the scheduled messages' routes (decision 0100), served by scheduled.http.ts. */
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
