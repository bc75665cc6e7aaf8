import { randomUUID } from 'node:crypto';
import { notFound } from '@svc/platform/errors';
import { z } from 'zod';
import type { ChatService } from '../chats/chat.service.js';
import { readMessage } from '../messages/message.store.js';
import { messageView, usersOf } from '../messages/message.view.js';
import type { InboundMessage } from '../providers/provider.js';
import type { ChatInbound } from './inbound.sink.js';

/**
 * POST /admin/v1/companies/{cid}/chats/{id}/inbound: a message from the chat's contact, delivered exactly as the
 * provider's webhook delivers one (the same InboundSink). `wamid` lets a caller repeat a delivery; `from.profile_name`
 * is the contact's profile name as WhatsApp sends it; `from_me` makes it an echo of the business's own phone.
 */
export const adminInboundBody = z.strictObject({
  type: z.string().min(1).max(30),
  body_text: z.string().max(4096).optional(),
  media: z
    .strictObject({
      id: z.string().max(200).optional(),
      url: z.url().optional(),
      mime_type: z.string().max(100).optional(),
      file_name: z.string().max(255).optional(),
    })
    .optional(),
  from: z.strictObject({ profile_name: z.string().max(200).optional() }).optional(),
  from_me: z.boolean().optional(),
  wamid: z.string().min(1).max(200).optional(),
  quoted_wamid: z.string().max(200).optional(),
  reaction: z.strictObject({ wamid: z.string().min(1).max(200), emoji: z.string().max(20).optional() }).optional(),
  is_history: z.boolean().optional(),
  is_forwarded: z.boolean().optional(),
});

export async function deliverInbound(
  chats: ChatService,
  inbound: ChatInbound,
  companyId: string,
  chatId: string,
  b: z.infer<typeof adminInboundBody>,
) {
  const chat = await chats.read(companyId, chatId);
  const whatsapp = chat.channel_type === 'WHATSAPP';
  const wamid = b.wamid ?? `wamid.admin.${randomUUID()}`;
  const event: InboundMessage = {
    kind: 'message',
    channel: chat.channel_type,
    provider: (whatsapp ? chat.number!.provider : chat.instagram!.provider) as InboundMessage['provider'],
    accountId: whatsapp ? chat.number!.phone_number_id : chat.instagram!.external_account_id,
    providerMessageId: wamid,
    contact: { id: whatsapp ? chat.wa_contact_id! : chat.external_contact_id!, profileName: b.from?.profile_name },
    fromMe: b.from_me ?? false,
    type: b.type,
    text: b.body_text,
    media: b.media ? { id: b.media.id, url: b.media.url, mimeType: b.media.mime_type, fileName: b.media.file_name } : undefined,
    quotedMessageId: b.quoted_wamid,
    reaction: b.reaction ? { messageId: b.reaction.wamid, emoji: b.reaction.emoji } : undefined,
    isForwarded: b.is_forwarded ?? false,
    isHistory: b.is_history ?? false,
    timestamp: new Date(),
    payload: { ...b, id: wamid },
  };
  await inbound.receive([event]);
  const pool = chats.poolOf();
  const { rows } = await (await pool).query<{ id: string }>('select id from messages where chat_id = $1 and wamid = $2', [
    chat.id,
    b.reaction ? b.reaction.wamid : wamid,
  ]);
  const id = rows[0]?.id;
  if (!id) throw notFound('Message');
  const m = (await readMessage(await pool, companyId, id))!;
  return messageView(m, await chats.people.users(companyId, usersOf(m, new Set())));
}
