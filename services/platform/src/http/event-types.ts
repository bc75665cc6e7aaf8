import { z } from 'zod';
import { route } from './contract.js';
import { type OpenApiFragment, serviceFragment } from './openapi.js';

type Json = Record<string, unknown>;

/** Only the gateway holds every payload schema: it answers from the assembled document (decision 0176). */
export const listWebhookEventTypes = route({
  method: 'get',
  path: '/webhooks/event-types',
  operationId: 'listWebhookEventTypes',
  summary: 'Every event key a subscription may name',
  description: 'Each with its description and the JSON Schema (2020-12) of its payload, self-contained (`$defs`).',
  tags: ['Webhooks'],
  permission: 'crm/webhooks.read',
  responses: {
    200: {
      description: 'The catalog, by key.',
      schema: z
        .object({
          total: z.number().int(),
          records: z.array(
            z
              .object({
                event_key: z.string(),
                description: z.string(),
                schema: z.record(z.string(), z.unknown()).meta({ description: 'The payload’s JSON Schema.' }),
              })
              .meta({ id: 'WebhookEventType' }),
          ),
          next_cursor: z.null(),
        })
        .meta({ id: 'WebhookEventTypeList' }),
    },
  },
});

export const EVENT_TYPES_PATH = `/integrations/external${listWebhookEventTypes.path}`;

export const gatewayFragment = (): OpenApiFragment =>
  serviceFragment('gateway', [{ prefix: '/integrations/external', contracts: [listWebhookEventTypes], undocumented: [] }]);

const REF = '#/components/schemas/';

/** Referenced components are copied under `$defs`, so a subscriber can validate with one schema alone. */
export function eventTypesOf(doc: Json) {
  const components = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const webhooks = (doc.webhooks ?? {}) as Record<string, { post: Json }>;
  const rewrite = (node: unknown, used: Set<string>): unknown => {
    if (Array.isArray(node)) return node.map((n) => rewrite(n, used));
    if (!node || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(REF)) {
        used.add(v.slice(REF.length));
        out[k] = `#/$defs/${v.slice(REF.length)}`;
      } else out[k] = rewrite(v, used);
    }
    return out;
  };
  const records = Object.entries(webhooks).map(([key, hook]) => {
    const envelope = ((hook.post.requestBody as Json).content as Record<string, { schema: Json }>)['application/json']!.schema;
    const used = new Set<string>();
    const schema = rewrite((envelope.properties as Json).payload, used) as Json;
    const defs: Record<string, unknown> = {};
    for (let pending = [...used]; pending.length; ) {
      const more = new Set<string>();
      for (const name of pending) if (!(name in defs)) defs[name] = rewrite(components[name], more);
      pending = [...more].filter((n) => !(n in defs));
    }
    return {
      event_key: key,
      description: String(hook.post.summary ?? ''),
      schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema, ...(used.size ? { $defs: defs } : {}) },
    };
  });
  return { total: records.length, records, next_cursor: null };
}
