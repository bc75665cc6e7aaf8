import type { Readable } from 'node:stream';
import type { GraphClient } from '../graph.js';
import { multipartBody } from '../multipart.js';
import {
  type ChatProvider,
  type DownloadedMedia,
  type MediaKind,
  type MediaRef,
  type MediaSource,
  ProviderError,
  type SendCommon,
  type SendResult,
  type TemplateCategory,
  type TemplateComponent,
  type TemplatePage,
  type TemplateParameter,
} from '../provider.js';

interface SendAnswer {
  contacts?: { input?: string; wa_id?: string }[];
  messages?: { id?: string; message_status?: string }[];
}

/** The Cloud API cannot delete a business-sent message, so deleteMessage is refused. */
export class WhatsAppCloudProvider implements ChatProvider {
  readonly name = 'whatsapp_cloud' as const;
  readonly channel = 'WHATSAPP' as const;

  constructor(
    private readonly graph: GraphClient,
    private readonly phoneNumberId: string,
    private readonly businessAccountId: string | undefined,
  ) {}

  sendText(input: SendCommon & { body: string; previewUrl?: boolean }): Promise<SendResult> {
    return this.send(input, { type: 'text', text: { body: input.body, preview_url: input.previewUrl ?? false } });
  }

  async sendTemplate(
    input: SendCommon & { template: { name: string; language: string }; components: TemplateComponent[] },
  ): Promise<SendResult> {
    const components = await Promise.all(input.components.map((c) => this.component(c)));
    const template: Record<string, unknown> = { name: input.template.name, language: { code: input.template.language } };
    if (components.length > 0) template.components = components;
    return this.send(input, { type: 'template', template });
  }

  async sendMedia(input: SendCommon & { kind: MediaKind; media: MediaSource; caption?: string }): Promise<SendResult> {
    const media: Record<string, unknown> = await this.mediaObject(input.media);
    if (input.caption !== undefined) {
      if (input.kind === 'audio' || input.kind === 'sticker')
        throw new ProviderError('unsupported', `WhatsApp ${input.kind} messages carry no caption`);
      media.caption = input.caption;
    }
    if (input.kind === 'document' && input.media.from === 'stream') media.filename = input.media.fileName;
    return this.send(input, { type: input.kind, [input.kind]: media });
  }

  async markRead(input: { to: string; messageId?: string }): Promise<void> {
    if (!input.messageId) throw new ProviderError('unsupported', 'WhatsApp marks read by the id of an inbound message');
    await this.graph.call({ method: 'POST', path: `/${this.phoneNumberId}/messages`, json: readBody(input.messageId) });
  }

  async setTyping(input: { to: string; isTyping: boolean; messageId?: string }): Promise<void> {
    // The indicator disappears by itself: there is nothing to send to hide it.
    if (!input.isTyping) return;
    if (!input.messageId)
      throw new ProviderError('unsupported', 'WhatsApp shows typing only in answer to an inbound message (reference_wamid)');
    await this.graph.call({
      method: 'POST',
      path: `/${this.phoneNumberId}/messages`,
      json: { ...readBody(input.messageId), typing_indicator: { type: 'text' } },
    });
  }

  async deleteMessage(): Promise<void> {
    throw new ProviderError('unsupported', 'WhatsApp Cloud API cannot delete a message the business sent');
  }

  async uploadMedia(file: { stream: Readable; mimeType: string; fileName: string; size?: number }): Promise<string> {
    const form = multipartBody({ messaging_product: 'whatsapp', type: file.mimeType }, { field: 'file', ...file });
    const headers: Record<string, string> = { 'content-type': form.contentType };
    if (form.contentLength !== undefined) headers['content-length'] = String(form.contentLength);
    const answer = await this.graph.call<{ id?: string }>({
      method: 'POST',
      path: `/${this.phoneNumberId}/media`,
      body: form.body,
      headers,
    });
    if (!answer.id) throw new ProviderError('unreachable', 'Graph accepted the upload without a media id', { outcomeUnknown: true });
    return answer.id;
  }

  async downloadMedia(ref: MediaRef): Promise<DownloadedMedia> {
    if (!ref.id) throw new ProviderError('unsupported', 'WhatsApp media is downloaded by its media id');
    const info = await this.graph.call<{ url?: string; mime_type?: string; file_size?: number; sha256?: string }>({
      method: 'GET',
      path: `/${encodeURIComponent(ref.id)}`,
      query: { phone_number_id: this.phoneNumberId },
    });
    if (!info.url) throw new ProviderError('rejected', `Graph gave no URL for media ${ref.id}`);
    // The media URL is Graph's own and short-lived: it needs the same token.
    const res = await this.graph.download(info.url, true);
    const length = Number(res.headers['content-length'] ?? info.file_size);
    return {
      stream: res.body,
      mimeType: info.mime_type ?? String(res.headers['content-type'] ?? 'application/octet-stream'),
      size: Number.isFinite(length) ? length : undefined,
      sha256: info.sha256,
    };
  }

  async listTemplates(input: { category?: TemplateCategory; limit?: number; after?: string; before?: string }): Promise<TemplatePage> {
    if (!this.businessAccountId)
      throw new ProviderError('unsupported', 'this WhatsApp number has no business account id to list templates of');
    const answer = await this.graph.call<{ data?: Record<string, unknown>[]; paging?: { cursors?: { before?: string; after?: string } } }>({
      method: 'GET',
      path: `/${this.businessAccountId}/message_templates`,
      query: {
        fields: 'id,name,language,status,category,components',
        category: input.category,
        limit: input.limit,
        after: input.after,
        before: input.before,
      },
    });
    return {
      data: answer.data ?? [],
      paging: { cursors: { before: answer.paging?.cursors?.before ?? null, after: answer.paging?.cursors?.after ?? null } },
    };
  }

  private async send(common: SendCommon, message: Record<string, unknown>): Promise<SendResult> {
    const json: Record<string, unknown> = { messaging_product: 'whatsapp', recipient_type: 'individual', to: common.to, ...message };
    if (common.replyTo) json.context = { message_id: common.replyTo };
    const answer = await this.graph.call<SendAnswer>({ method: 'POST', path: `/${this.phoneNumberId}/messages`, json });
    const sent = answer.messages?.[0];
    if (!sent?.id) throw new ProviderError('unreachable', 'Graph accepted the message without a message id', { outcomeUnknown: true });
    return {
      providerMessageId: sent.id,
      recipientId: answer.contacts?.[0]?.wa_id,
      status: sent.message_status === undefined || sent.message_status === 'accepted' ? 'sent' : 'processing',
    };
  }

  private async mediaObject(media: MediaSource): Promise<Record<string, unknown>> {
    if (media.from === 'url') return { link: media.url };
    if (media.from === 'provider_id') return { id: media.id };
    return { id: await this.uploadMedia(media) };
  }

  private async component(c: TemplateComponent): Promise<Record<string, unknown>> {
    if (c.type === 'carousel') {
      const cards = await Promise.all(
        (c.cards ?? []).map(async (card) => ({
          card_index: card.cardIndex,
          components: await Promise.all(card.components.map((inner) => this.component(inner))),
        })),
      );
      return { type: 'carousel', cards };
    }
    const out: Record<string, unknown> = { type: c.type, parameters: await Promise.all(c.parameters.map((p) => this.parameter(p))) };
    if (c.type === 'button') {
      out.sub_type = c.subType ?? 'quick_reply';
      out.index = String(c.index ?? 0);
    }
    return out;
  }

  private async parameter(p: TemplateParameter): Promise<Record<string, unknown>> {
    if (p.type === 'text') return { type: 'text', text: p.text };
    if (p.type === 'payload') return { type: 'payload', payload: p.payload };
    const media = await this.mediaObject(p.media);
    if (p.type === 'document' && p.media.from === 'stream') media.filename = p.media.fileName;
    return { type: p.type, [p.type]: media };
  }
}

const readBody = (messageId: string) => ({ messaging_product: 'whatsapp', status: 'read', message_id: messageId });
