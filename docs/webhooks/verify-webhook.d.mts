export class WebhookVerificationError extends Error {}
export function verifyWebhook(options: {
  body: string | Buffer;
  headers: Record<string, string | string[] | undefined> | Headers;
  secrets: string[];
  toleranceSeconds?: number;
  now?: number;
}): { event_id?: string; event_key: string; payload: Record<string, unknown> };
