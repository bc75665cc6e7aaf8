import type { GraphClient } from '../graph.js';
import {
  type ChatProvider,
  type DownloadedMedia,
  type MediaKind,
  type MediaRef,
  type MediaSource,
  ProviderError,
  type SendCommon,
  type SendResult,
  type TemplatePage,
} from '../provider.js';

const ATTACHMENT: Record<MediaKind, string | undefined> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  document: 'file',
  sticker: undefined,
};

/** Attachments go by URL only; Instagram has no templates and cannot delete sent messages. */
export class InstagramMessagingProvider implements ChatProvider {
  readonly name = 'instagram_messaging' as const;
  readonly channel = 'INSTAGRAM' as const;

  constructor(
    private readonly graph: GraphClient,
    private readonly accountId: string,
  ) {}

  sendText(input: SendCommon & { body: string }): Promise<SendResult> {
    return this.send(input, { text: input.body });
  }

  async sendTemplate(): Promise<SendResult> {
    throw new ProviderError('unsupported', 'Instagram has no message templates');
  }

  async sendMedia(input: SendCommon & { kind: MediaKind; media: MediaSource; caption?: string }): Promise<SendResult> {
    const type = ATTACHMENT[input.kind];
    if (!type) throw new ProviderError('unsupported', `Instagram does not send ${input.kind} attachments`);
    if (input.caption !== undefined)
      throw new ProviderError('unsupported', 'Instagram attachments carry no caption: send the text on its own');
    if (input.media.from !== 'url') throw new ProviderError('unsupported', 'Instagram takes attachments by public URL only');
    return this.send(input, { attachment: { type, payload: { url: input.media.url } } });
  }

  async markRead(input: { to: string }): Promise<void> {
    await this.action(input.to, 'mark_seen');
  }

  async setTyping(input: { to: string; isTyping: boolean }): Promise<void> {
    await this.action(input.to, input.isTyping ? 'typing_on' : 'typing_off');
  }

  async deleteMessage(): Promise<void> {
    throw new ProviderError('unsupported', 'Instagram Messaging cannot delete a message the business sent');
  }

  async downloadMedia(ref: MediaRef): Promise<DownloadedMedia> {
    if (!ref.url) throw new ProviderError('unsupported', 'Instagram media is downloaded from its attachment URL');
    // Attachment URLs are signed CDN links: the token is not sent to them.
    const res = await this.graph.download(ref.url, false);
    const length = Number(res.headers['content-length']);
    return {
      stream: res.body,
      mimeType: String(res.headers['content-type'] ?? ref.mimeType ?? 'application/octet-stream'),
      size: Number.isFinite(length) ? length : undefined,
    };
  }

  async listTemplates(): Promise<TemplatePage> {
    throw new ProviderError('unsupported', 'Instagram has no message templates');
  }

  private async send(common: SendCommon, message: Record<string, unknown>): Promise<SendResult> {
    const json: Record<string, unknown> = { recipient: { id: common.to }, message };
    if (common.replyTo) json.reply_to = { mid: common.replyTo };
    const answer = await this.graph.call<{ recipient_id?: string; message_id?: string }>({
      method: 'POST',
      path: `/${this.accountId}/messages`,
      json,
    });
    if (!answer.message_id)
      throw new ProviderError('unreachable', 'Graph accepted the message without a message id', { outcomeUnknown: true });
    return { providerMessageId: answer.message_id, recipientId: answer.recipient_id, status: 'sent' };
  }

  private async action(to: string, senderAction: 'mark_seen' | 'typing_on' | 'typing_off'): Promise<void> {
    await this.graph.call({
      method: 'POST',
      path: `/${this.accountId}/messages`,
      json: { recipient: { id: to }, sender_action: senderAction },
    });
  }
}
