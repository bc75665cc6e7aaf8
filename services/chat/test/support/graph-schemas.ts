import { z } from 'zod';

/**
 * The request bodies Graph accepts, as strict as the fake Graph server needs to catch a client that sends
 * something Graph would refuse (a misspelt key, a missing messaging_product, a parameter in the wrong shape).
 */
const text = z.object({ type: z.literal('text'), text: z.string().min(1) }).strict();
const payload = z.object({ type: z.literal('payload'), payload: z.string().min(1) }).strict();
const mediaRef = z.union([
  z.object({ link: z.url(), caption: z.string().optional(), filename: z.string().optional() }).strict(),
  z.object({ id: z.string().min(1), caption: z.string().optional(), filename: z.string().optional() }).strict(),
]);
const mediaParameter = z.union([
  z.object({ type: z.literal('image'), image: mediaRef }).strict(),
  z.object({ type: z.literal('video'), video: mediaRef }).strict(),
  z.object({ type: z.literal('document'), document: mediaRef }).strict(),
]);

const component: z.ZodType = z.lazy(() =>
  z.union([
    z.object({ type: z.literal('header'), parameters: z.array(z.union([text, mediaParameter])).length(1) }).strict(),
    z.object({ type: z.literal('body'), parameters: z.array(text).min(1) }).strict(),
    z
      .object({
        type: z.literal('button'),
        sub_type: z.enum(['quick_reply', 'url']),
        index: z.string().regex(/^\d+$/),
        parameters: z.array(z.union([text, payload])).length(1),
      })
      .strict(),
    z
      .object({
        type: z.literal('carousel'),
        cards: z.array(z.object({ card_index: z.number().int().min(0), components: z.array(component).min(1) }).strict()).min(1),
      })
      .strict(),
  ]),
);

const envelope = {
  messaging_product: z.literal('whatsapp'),
  recipient_type: z.literal('individual'),
  to: z.string().regex(/^\+?\d{6,20}$/),
  context: z
    .object({ message_id: z.string().startsWith('wamid.') })
    .strict()
    .optional(),
};

const mediaMessage = <K extends string>(kind: K, withCaption: boolean) => {
  const allowed = withCaption ? mediaRef : z.union([z.object({ link: z.url() }).strict(), z.object({ id: z.string().min(1) }).strict()]);
  return z.object({ ...envelope, type: z.literal(kind), [kind]: allowed }).strict();
};

export const whatsappMessageBody = z.union([
  z
    .object({
      ...envelope,
      type: z.literal('text'),
      text: z.object({ body: z.string().min(1).max(4096), preview_url: z.boolean().optional() }).strict(),
    })
    .strict(),
  z
    .object({
      ...envelope,
      type: z.literal('template'),
      template: z
        .object({
          name: z.string().min(1),
          language: z.object({ code: z.string().min(2) }).strict(),
          components: z.array(component).min(1).optional(),
        })
        .strict(),
    })
    .strict(),
  mediaMessage('image', true),
  mediaMessage('video', true),
  mediaMessage('document', true),
  mediaMessage('audio', false),
  mediaMessage('sticker', false),
  z
    .object({
      messaging_product: z.literal('whatsapp'),
      status: z.literal('read'),
      message_id: z.string().startsWith('wamid.'),
      typing_indicator: z
        .object({ type: z.literal('text') })
        .strict()
        .optional(),
    })
    .strict(),
]);

export const instagramMessageBody = z.union([
  z
    .object({
      recipient: z.object({ id: z.string().min(1) }).strict(),
      reply_to: z
        .object({ mid: z.string().min(1) })
        .strict()
        .optional(),
      message: z.union([
        z.object({ text: z.string().min(1).max(1000) }).strict(),
        z
          .object({
            attachment: z
              .object({ type: z.enum(['image', 'video', 'audio', 'file']), payload: z.object({ url: z.url() }).strict() })
              .strict(),
          })
          .strict(),
      ]),
    })
    .strict(),
  z
    .object({
      recipient: z.object({ id: z.string().min(1) }).strict(),
      sender_action: z.enum(['typing_on', 'typing_off', 'mark_seen']),
    })
    .strict(),
]);
