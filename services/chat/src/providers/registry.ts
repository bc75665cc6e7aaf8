import type { Dispatcher } from 'undici';
import type { ProviderConfig } from './config.js';
import { GraphClient } from './graph.js';
import { InstagramMessagingProvider } from './instagram/client.js';
import { type ChatProvider, type ProviderAccount, ProviderError, type ProviderRegistry } from './provider.js';
import { SandboxProvider } from './sandbox.js';
import { WhatsAppCloudProvider } from './whatsapp/client.js';

/** A provider without configured credentials is an operator's mistake, reported when used. */
export function createProviderRegistry(config: ProviderConfig, options: { dispatcher?: Dispatcher } = {}): ProviderRegistry {
  const sandbox = { WHATSAPP: new SandboxProvider('WHATSAPP'), INSTAGRAM: new SandboxProvider('INSTAGRAM') };
  let whatsapp: GraphClient | undefined;
  let instagram: GraphClient | undefined;
  const timeoutMs = config.PROVIDER_TIMEOUT_MS;

  return {
    forAccount(account: ProviderAccount): ChatProvider {
      if (account.provider === 'sandbox') return sandbox[account.channel];
      if (account.provider === 'whatsapp_cloud' && account.channel === 'WHATSAPP') {
        const accessToken = required(config.WHATSAPP_ACCESS_TOKEN, 'WHATSAPP_ACCESS_TOKEN', account.provider);
        whatsapp ??= new GraphClient({ baseUrl: config.WHATSAPP_GRAPH_URL, accessToken, timeoutMs, dispatcher: options.dispatcher });
        return new WhatsAppCloudProvider(whatsapp, account.accountId, account.businessAccountId);
      }
      if (account.provider === 'instagram_messaging' && account.channel === 'INSTAGRAM') {
        const accessToken = required(config.INSTAGRAM_ACCESS_TOKEN, 'INSTAGRAM_ACCESS_TOKEN', account.provider);
        instagram ??= new GraphClient({ baseUrl: config.INSTAGRAM_GRAPH_URL, accessToken, timeoutMs, dispatcher: options.dispatcher });
        return new InstagramMessagingProvider(instagram, account.accountId);
      }
      throw new ProviderError('unsupported', `provider ${account.provider} does not serve ${account.channel} accounts`);
    },
  };
}

function required(value: string | undefined, variable: string, provider: string): string {
  if (!value) throw new ProviderError('unreachable', `${provider} is not configured: ${variable} is not set`);
  return value;
}
