import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

/**
 * A typed client of the external API, generated from its OpenAPI document (decision 0104): paths, parameters,
 * bodies and answers are the document's (src/schema.d.ts), the calls are openapi-fetch's.
 *
 *   const api = createClient({ baseUrl: 'https://crm.example/', key: process.env.CRM_KEY });
 *   const { data, error, response } = await api.POST('/integrations/external/leads', { body: { title: 'New lead' } });
 */
export type { components, paths };
export type Schemas = components['schemas'];
export type ApiClient = Client<paths>;

export interface ApiClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The gateway's address, without `/integrations/external`. */
  baseUrl: string;
  /** The integration key (`svc_…`), sent as `Authorization: Bearer <key>`. */
  key?: string;
}

export function createClient({ key, headers, ...options }: ApiClientOptions): ApiClient {
  return createFetchClient<paths>({
    ...options,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(headers as Record<string, string> | undefined) },
  });
}
