import type { ChatProvider, ProviderName, ProviderRegistry } from '../providers/provider.js';
import type { ChatRead } from './chat.store.js';

export function providerOf(providers: ProviderRegistry, chat: ChatRead): ChatProvider {
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

export const contactOf = (chat: ChatRead) => (chat.channelType === 'WHATSAPP' ? chat.waContactId! : chat.externalContactId!);
