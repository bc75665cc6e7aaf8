import { randomUUID } from 'node:crypto';
import {
  type Channel,
  type ChatProvider,
  type DownloadedMedia,
  type MediaKind,
  type MediaSource,
  ProviderError,
  type SendCommon,
  type SendResult,
  type TemplateCategory,
  type TemplateComponent,
  type TemplatePage,
} from './provider.js';

/** No credentials, no network; an unknown template is refused with Graph's own code so failures can be tried without Meta. */
export const SANDBOX_TEMPLATES: { name: string; language: string; category: TemplateCategory; body: string }[] = [
  { name: 'hello_world', language: 'en_US', category: 'UTILITY', body: 'Hello World' },
  { name: 'order_update', language: 'en_US', category: 'UTILITY', body: 'Your order {{1}} is {{2}}.' },
  { name: 'appointment_reminder', language: 'pt_BR', category: 'UTILITY', body: 'Olá {{1}}, lembrete da sua consulta em {{2}}.' },
  { name: 'seasonal_offer', language: 'en_US', category: 'MARKETING', body: 'Hi {{1}}, our {{2}} offer ends soon.' },
  { name: 'verification_code', language: 'en_US', category: 'AUTHENTICATION', body: '{{1}} is your verification code.' },
];

export class SandboxProvider implements ChatProvider {
  readonly name = 'sandbox' as const;

  constructor(readonly channel: Channel) {}

  async sendText(input: SendCommon & { body: string }): Promise<SendResult> {
    if (input.body.length === 0) throw new ProviderError('rejected', 'text body is empty', { code: 100 });
    return this.accepted(input);
  }

  async sendTemplate(
    input: SendCommon & { template: { name: string; language: string }; components: TemplateComponent[] },
  ): Promise<SendResult> {
    if (this.channel === 'INSTAGRAM') throw new ProviderError('unsupported', 'Instagram has no message templates');
    const known = SANDBOX_TEMPLATES.some((t) => t.name === input.template.name && t.language === input.template.language);
    if (!known) {
      throw new ProviderError('rejected', `template ${input.template.name} (${input.template.language}) does not exist`, { code: 132001 });
    }
    for (const c of input.components) {
      for (const p of c.parameters) if ('media' in p) await drain(p.media);
    }
    return this.accepted(input);
  }

  async sendMedia(input: SendCommon & { kind: MediaKind; media: MediaSource }): Promise<SendResult> {
    await drain(input.media);
    return this.accepted(input);
  }

  async markRead(): Promise<void> {}

  async setTyping(): Promise<void> {}

  async deleteMessage(): Promise<void> {}

  async downloadMedia(): Promise<DownloadedMedia> {
    throw new ProviderError('rejected', 'the sandbox holds no media to download', { code: 100 });
  }

  async listTemplates(input: { category?: TemplateCategory; limit?: number; after?: string; before?: string }): Promise<TemplatePage> {
    if (this.channel === 'INSTAGRAM') throw new ProviderError('unsupported', 'Instagram has no message templates');
    const all = SANDBOX_TEMPLATES.filter((t) => !input.category || t.category === input.category).map((t) => ({
      id: `sandbox-${t.name}-${t.language}`,
      name: t.name,
      language: t.language,
      status: 'APPROVED',
      category: t.category,
      components: [{ type: 'BODY', text: t.body }],
    }));
    const limit = Math.max(1, Math.min(input.limit ?? 25, 100));
    // Cursors are positions, as opaque to the caller as Graph's own.
    let start = 0;
    if (input.after) start = cursorPosition(input.after) + 1;
    else if (input.before) start = Math.max(0, cursorPosition(input.before) - limit);
    const page = all.slice(start, start + limit);
    const end = start + page.length - 1;
    return {
      data: page,
      paging: {
        cursors: {
          before: page.length > 0 && start > 0 ? cursorOf(start) : null,
          after: page.length > 0 && end < all.length - 1 ? cursorOf(end) : null,
        },
      },
    };
  }

  private accepted(input: SendCommon): SendResult {
    const prefix = this.channel === 'WHATSAPP' ? 'wamid.sandbox.' : 'mid.sandbox.';
    return { providerMessageId: `${prefix}${randomUUID()}`, recipientId: input.to, status: 'sent' };
  }
}

const cursorOf = (position: number) => Buffer.from(`sandbox:${position}`).toString('base64url');

function cursorPosition(cursor: string): number {
  const match = /^sandbox:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw new ProviderError('rejected', 'invalid paging cursor', { code: 100 });
  return Number(match[1]);
}

async function drain(media: MediaSource): Promise<void> {
  if (media.from !== 'stream') return;
  let read = 0;
  for await (const chunk of media.stream) read += (chunk as Buffer).length;
  if (media.size !== undefined && read !== media.size) {
    throw new ProviderError('unsupported', `${media.fileName}: ${read} bytes read, ${media.size} declared`);
  }
}
