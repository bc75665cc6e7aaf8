import type { Readable } from 'node:stream';
import { AppError, invalidFields } from '@svc/platform/errors';

/** One provider object per account; every operation resolves normalized or rejects with a ProviderError. */

/** Configured per WhatsApp number / Instagram account (`provider` column), see docs/chat-providers.md. */
export type ProviderName = 'sandbox' | 'whatsapp_cloud' | 'instagram_messaging';
export type Channel = 'WHATSAPP' | 'INSTAGRAM';

export interface ProviderAccount {
  provider: ProviderName;
  channel: Channel;
  /** WhatsApp phone_number_id, or the Instagram professional account id (IG user id). */
  accountId: string;
  /** WhatsApp Business Account id, needed to list templates; absent for Instagram. */
  businessAccountId?: string;
}

export interface ProviderRegistry {
  /** The provider bound to this account; throws ProviderError 'unsupported' when its provider is not configured. */
  forAccount(account: ProviderAccount): ChatProvider;
}

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** A stream is uploaded as read, never held whole; Instagram takes media only by URL. */
export type MediaSource =
  | { from: 'url'; url: string }
  | { from: 'stream'; stream: Readable; mimeType: string; fileName: string; size?: number }
  | { from: 'provider_id'; id: string };

/** Template components in the provider's shape (WhatsApp Cloud API `components`); see template-fields.ts. */
export type TemplateParameter =
  | { type: 'text'; text: string }
  | { type: 'payload'; payload: string }
  /** Header media: by URL (the route's rule), or a file attached to the send, uploaded first. */
  | { type: 'image' | 'video' | 'document'; media: MediaSource };

export interface TemplateComponent {
  type: 'header' | 'body' | 'button' | 'carousel';
  /** Buttons: quick_reply or url; its position in the template. */
  subType?: 'quick_reply' | 'url';
  index?: number;
  parameters: TemplateParameter[];
  /** A carousel component holds the components of each card, by card index (its parameters stay empty). */
  cards?: { cardIndex: number; components: TemplateComponent[] }[];
}

export interface SendCommon {
  /** WhatsApp wa_id (or phone number), Instagram-scoped user id (IGSID). */
  to: string;
  /** Provider message id this message replies to (WhatsApp `context.message_id`, Instagram `reply_to.mid`). */
  replyTo?: string;
}

export interface SendResult {
  /** wamid on WhatsApp, mid on Instagram: the key status callbacks refer to. */
  providerMessageId: string;
  /** The recipient as the provider resolved it (WhatsApp contacts[0].wa_id), when it says. */
  recipientId?: string;
  /** `sent` once the provider accepted it; `processing` when it holds it (WhatsApp held_for_quality_assessment). */
  status: 'sent' | 'processing';
}

export interface DownloadedMedia {
  stream: Readable;
  mimeType: string;
  size?: number;
  sha256?: string;
}

export type TemplateCategory = 'AUTHENTICATION' | 'MARKETING' | 'UTILITY' | 'SERVICE';

export interface TemplatePage {
  data: Record<string, unknown>[];
  paging: { cursors: { before: string | null; after: string | null } };
}

export interface ChatProvider {
  readonly name: ProviderName;
  readonly channel: Channel;
  sendText(input: SendCommon & { body: string; previewUrl?: boolean }): Promise<SendResult>;
  sendTemplate(input: SendCommon & { template: { name: string; language: string }; components: TemplateComponent[] }): Promise<SendResult>;
  sendMedia(input: SendCommon & { kind: MediaKind; media: MediaSource; caption?: string }): Promise<SendResult>;
  /** WhatsApp marks the given inbound message (and all before it) read; Instagram sends mark_seen to `to`. */
  markRead(input: { to: string; messageId?: string }): Promise<void>;
  /** WhatsApp needs the inbound `messageId` and cannot hide typing early: isTyping=false sends nothing. */
  setTyping(input: { to: string; isTyping: boolean; messageId?: string }): Promise<void>;
  /** Neither Graph API deletes a business-sent message: both refuse with 'unsupported'; the sandbox accepts. */
  deleteMessage(input: { to: string; messageId: string }): Promise<void>;
  /** WhatsApp: a media id from an inbound message. Instagram: the attachment URL of the inbound message. */
  downloadMedia(ref: MediaRef): Promise<DownloadedMedia>;
  listTemplates(input: { category?: TemplateCategory; limit?: number; after?: string; before?: string }): Promise<TemplatePage>;
}

/** `outcomeUnknown`: the request may have acted anyway, so a send failed that way is `delivery_unknown`. */
export type ProviderFailure = 'unsupported' | 'rejected' | 'unreachable';

export interface ProviderErrorDetail {
  code?: number;
  subcode?: number;
  httpStatus?: number;
  traceId?: string;
  outcomeUnknown?: boolean;
}

export class ProviderError extends Error {
  constructor(
    readonly failure: ProviderFailure,
    message: string,
    readonly detail: ProviderErrorDetail = {},
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

export const isProviderError = (e: unknown): e is ProviderError => e instanceof ProviderError;

/** Refusals are 400, failing to reach the provider is 500; sends record failures instead (spec Errors). */
export function providerErrorToAppError(e: ProviderError): AppError {
  if (e.failure === 'unreachable') return new AppError('internal', `messaging provider unreachable: ${e.message}`);
  const message = e.failure === 'unsupported' ? e.message : `messaging provider refused: ${e.message}`;
  // No field of the request is wrong: the refusal is the provider's, named as such.
  return invalidFields([{ field: 'provider', message }], message, { provider_error_code: e.detail.code });
}

// Inbound: webhook routes parse provider callbacks into these for the chat service's sink.

export interface MediaRef {
  /** WhatsApp media id (download through the provider). */
  id?: string;
  /** Instagram attachment URL (CDN, expires) or any direct URL. */
  url?: string;
  mimeType?: string;
  sha256?: string;
  fileName?: string;
}

export interface InboundMessage {
  kind: 'message';
  channel: Channel;
  provider: ProviderName;
  /** The business side: phone_number_id (WhatsApp) or IG account id; the sink finds the number by it. */
  accountId: string;
  /** wamid / mid; the same id arrives again when the provider repeats a callback, so the sink dedupes on it. */
  providerMessageId: string;
  /** The customer: wa_id or IGSID, with the profile name when the provider sends one. */
  contact: { id: string; profileName?: string };
  /** True for echoes of messages the business sent from another device or app (origin MOBILE_APP_ECHO). */
  fromMe: boolean;
  /** The provider's type, kept as sent (text, image, reaction, interactive, button, ..., unsupported). */
  type: string;
  text?: string;
  media?: MediaRef;
  /** The message this one quotes (WhatsApp context.id, Instagram reply_to.mid). */
  quotedMessageId?: string;
  /** A reaction to `messageId`; emoji absent means the reaction was removed. */
  reaction?: { messageId: string; emoji?: string };
  isForwarded: boolean;
  /** History sync (WhatsApp coexistence) rather than a live message; `history` places it in the sync. */
  isHistory: boolean;
  history?: { phase: number; chunkOrder: number; progress: number };
  timestamp: Date;
  payload: Record<string, unknown>;
}

export interface InboundStatus {
  kind: 'status';
  channel: Channel;
  provider: ProviderName;
  accountId: string;
  providerMessageId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  recipientId?: string;
  timestamp: Date;
  /** WhatsApp's errors of a failed status ({code, title, message}); the first gives error_code / error_message. */
  errors: { code: number; title: string; message?: string }[];
}

export type InboundEvent = InboundMessage | InboundStatus;

/** The webhook answers 200 only after it resolves, so a throw makes the provider resend; repeats must be absorbed. */
export interface InboundSink {
  receive(events: InboundEvent[]): Promise<void>;
}
