import type { ChatProvider, ProviderName, ProviderRegistry } from '../providers/provider.js';
import type { ChatToSend } from './chat.store.js';

export function providerOf(providers: ProviderRegistry, chat: Omit<ChatToSend, 'actorAgentId'>): ChatProvider {
  if (chat.channelType === 'WHATSAPP') {
    const n = chat.number!;
    return providers.forAccount({
      provider: n.provider as ProviderName,
      channel: 'WHATSAPP',
      accountId: n.phoneNumberId,
      businessAccountId: n.businessAccountId ?? undefined,
    });
  }
  const i = chat.instagram!;
  return providers.forAccount({ provider: i.provider as ProviderName, channel: 'INSTAGRAM', accountId: i.externalAccountId });
}

export const contactOf = (chat: Omit<ChatToSend, 'actorAgentId'>) =>
  chat.channelType === 'WHATSAPP' ? chat.waContactId! : chat.externalContactId!;
