import { z } from 'zod';
import type { InboundEvent, InboundMessage, MediaRef } from '../provider.js';

/** Instagram reports no sent or delivered status, only reads (a read covers earlier messages); timestamps are milliseconds. */
const party = z.looseObject({ id: z.string().min(1) });
const attachment = z.looseObject({ type: z.string(), payload: z.looseObject({ url: z.string().optional() }).optional() });
const messaging = z.looseObject({
  sender: party,
  recipient: party,
  timestamp: z.number(),
  message: z
    .looseObject({
      mid: z.string().min(1),
      text: z.string().optional(),
      attachments: z.array(attachment).optional(),
      is_echo: z.boolean().optional(),
      is_deleted: z.boolean().optional(),
      is_unsupported: z.boolean().optional(),
      reply_to: z.looseObject({ mid: z.string().optional() }).optional(),
      quick_reply: z.looseObject({ payload: z.string() }).optional(),
    })
    .optional(),
  reaction: z
    .looseObject({ mid: z.string(), action: z.enum(['react', 'unreact']), emoji: z.string().optional(), reaction: z.string().optional() })
    .optional(),
  postback: z.looseObject({ mid: z.string().optional(), title: z.string().optional(), payload: z.string().optional() }).optional(),
  read: z.looseObject({ mid: z.string() }).optional(),
});

export const instagramCallback = z.looseObject({
  object: z.literal('instagram'),
  entry: z.array(z.looseObject({ id: z.string(), time: z.number().optional(), messaging: z.array(z.unknown()).optional() })),
});

/** Instagram's attachment types, named as the chat message types where one matches. */
const TYPE_OF: Record<string, string> = { file: 'document' };

export function instagramEvents(callback: z.infer<typeof instagramCallback>): InboundEvent[] {
  const events: InboundEvent[] = [];
  for (const entry of callback.entry) {
    const accountId = entry.id;
    for (const raw of entry.messaging ?? []) {
      const parsed = messaging.safeParse(raw);
      if (!parsed.success) continue;
      const m = parsed.data;
      const fromMe = m.message?.is_echo === true;
      const contactId = fromMe || m.sender.id === accountId ? m.recipient.id : m.sender.id;
      const timestamp = new Date(m.timestamp);
      const base = {
        kind: 'message' as const,
        channel: 'INSTAGRAM' as const,
        provider: 'instagram_messaging' as const,
        accountId,
        contact: { id: contactId },
        fromMe,
        isForwarded: false,
        isHistory: false,
        timestamp,
        payload: raw as Record<string, unknown>,
      };

      if (m.message && !m.message.is_deleted) {
        const msg = m.message;
        const first = msg.attachments?.[0];
        const event: InboundMessage = {
          ...base,
          providerMessageId: msg.mid,
          type: msg.is_unsupported ? 'unsupported' : first && msg.text === undefined ? (TYPE_OF[first.type] ?? first.type) : 'text',
        };
        if (msg.text !== undefined) event.text = msg.text;
        if (first?.payload?.url) event.media = mediaOf(first.payload.url);
        if (msg.reply_to?.mid) event.quotedMessageId = msg.reply_to.mid;
        events.push(event);
      } else if (m.reaction) {
        // A reaction has no id of its own: the reacted message, the reactor and the moment identify it.
        const emoji = m.reaction.action === 'react' ? (m.reaction.emoji ?? m.reaction.reaction) : undefined;
        events.push({
          ...base,
          providerMessageId: `reaction:${m.reaction.mid}:${m.sender.id}:${m.timestamp}`,
          type: 'reaction',
          reaction: emoji ? { messageId: m.reaction.mid, emoji } : { messageId: m.reaction.mid },
          ...(emoji ? { text: emoji } : {}),
        });
      } else if (m.postback) {
        const event: InboundMessage = {
          ...base,
          providerMessageId: m.postback.mid ?? `postback:${m.sender.id}:${m.timestamp}`,
          type: 'button',
        };
        if (m.postback.title !== undefined) event.text = m.postback.title;
        events.push(event);
      } else if (m.read) {
        events.push({
          kind: 'status',
          channel: 'INSTAGRAM',
          provider: 'instagram_messaging',
          accountId,
          providerMessageId: m.read.mid,
          status: 'read',
          recipientId: m.sender.id,
          timestamp,
          errors: [],
        });
      }
    }
  }
  return events;
}

function mediaOf(url: string): MediaRef {
  return { url };
}
