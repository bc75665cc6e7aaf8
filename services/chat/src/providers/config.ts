import { env } from '@svc/platform/config';
import { z } from 'zod';

/** Credentials are optional: a `sandbox` number needs none; a number on an unconfigured provider is refused when used. */
export const providerConfigShape = {
  /** Graph base URL with its version; tests point it at a fake Graph server on loopback. */
  WHATSAPP_GRAPH_URL: env.httpUrl.default('https://graph.facebook.com/v23.0'),
  WHATSAPP_ACCESS_TOKEN: z.string().min(1).optional(),
  /** Meta app secret: the key of X-Hub-Signature-256 on webhook callbacks. */
  WHATSAPP_APP_SECRET: z.string().min(1).optional(),
  /** The token Meta echoes in the webhook's GET verification handshake. */
  WHATSAPP_VERIFY_TOKEN: z.string().min(1).optional(),
  INSTAGRAM_GRAPH_URL: env.httpUrl.default('https://graph.instagram.com/v23.0'),
  INSTAGRAM_ACCESS_TOKEN: z.string().min(1).optional(),
  INSTAGRAM_APP_SECRET: z.string().min(1).optional(),
  INSTAGRAM_VERIFY_TOKEN: z.string().min(1).optional(),
  /** Longest wait for the provider's response headers (JSON calls, and after an upload's last byte). */
  PROVIDER_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
};

const providerConfigSchema = z.object(providerConfigShape);
export type ProviderConfig = z.infer<typeof providerConfigSchema>;
