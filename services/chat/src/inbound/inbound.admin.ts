import { randomUUID } from 'node:crypto';
import { notFound } from '@svc/platform/errors';
import { parse } from '@svc/platform/http/parse';
import type { Router } from 'express';
import type { Pool } from 'pg';
import { z } from 'zod';
import type { ChatService } from '../chats/chat.service.js';
import { messageIdByWamid, readMessage } from '../messages/message.store.js';
import { messageView, usersOf } from '../messages/message.view.js';
import type { InboundMessage } from '../providers/provider.js';
import type { ChatInbound } from './inbound.sink.js';

/** Delivered exactly as the provider's webhook delivers one (the same InboundSink); `wamid` lets a caller repeat it. */
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

export interface InboundAdminDeps {
  chats: ChatService;
  inbound: ChatInbound;
  pool: () => Promise<Pool>;
}

export async function deliverInbound(d: InboundAdminDeps, companyId: string, chatId: string, b: z.infer<typeof adminInboundBody>) {
  const chat = await d.chats.read(companyId, chatId);
  const whatsapp = chat.channelType === 'WHATSAPP';
  const wamid = b.wamid ?? `wamid.admin.${randomUUID()}`;
  const event: InboundMessage = {
    kind: 'message',
    channel: chat.channelType as InboundMessage['channel'],
    provider: (whatsapp ? chat.number!.provider : chat.instagram!.provider) as InboundMessage['provider'],
    accountId: whatsapp ? chat.number!.phoneNumberId : chat.instagram!.externalAccountId,
    providerMessageId: wamid,
    contact: { id: whatsapp ? chat.waContactId! : chat.externalContactId!, profileName: b.from?.profile_name },
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
  await d.inbound.receive([event]);
  const pool = await d.pool();
  const id = await messageIdByWamid(pool, chat.id, b.reaction ? b.reaction.wamid : wamid);
  if (!id) throw notFound('Message');
  const m = (await readMessage(pool, companyId, id))!;
  return messageView(m, await d.chats.people.users(companyId, usersOf(m, new Set())));
}

export function inboundAdminRoutes(r: Router, d: InboundAdminDeps): Router {
  r.post('/companies/:cid/chats/:id/inbound', async (req, res) => {
    res.status(201).json(await deliverInbound(d, req.params.cid, req.params.id, parse(adminInboundBody, req.body)));
  });
  return r;
}
