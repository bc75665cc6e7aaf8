import { gatewayFragment } from './event-types.js';
import type { OpenApiFragment } from './openapi.js';
import recordedExamples from './openapi-examples.json' with { type: 'json' };

type Json = Record<string, unknown>;

/** One shared response per status (decisions 0141, 0163). */
const ERRORS: Record<number, string> = {
  400:
    'Invalid payload or business rule; `message` names each offending field (`title: must be 1 to 150 characters`) ' +
    'and `details.fields` lists the same fields as `{field, message}`.',
  401: 'Key missing, invalid, inactive or expired, or the Origin (else Referer) host is not the key’s allowed_domain.',
  403: 'The key (or the user who created it) lacks the permission the operation needs.',
  404: 'The resource does not exist in the key’s company (another company’s record is 404, never 403).',
  409: 'An idempotent creation with this key is still processing, or failed after starting: use a new key.',
  408: 'The request body (or its headers) arrived too slowly: nothing for the gateway’s idle timeout, less than its minimum rate, or not whole within its deadline; `message` says which, and nothing was written.',
  413: 'The body is larger than the limit (1 MB of JSON, or an upload over its documented size); the upload ended as that byte arrived and nothing was stored.',
  415: 'The body is not `application/json` (utf-8, no `Content-Encoding`), or not `multipart/form-data` where a route takes files.',
  431: 'The request line or headers are larger than 16 KB.',
  429: 'The key’s per-minute request limit is exceeded, or it has too many requests in flight at once; `Retry-After` says when to try again.',
  500: 'Internal failure or a failure talking to a provider.',
  503: 'A service behind the gateway is unavailable; retry later.',
};

const DESCRIPTION = `The CRM's external integration API and its outbound webhooks.

**Authentication.** Every operation takes \`Authorization: Bearer <key>\` with an integration key (\`svc_…\`). A key with
\`allowed_domain\` only answers requests whose \`Origin\` (else \`Referer\`) host matches it.

**Errors.** Every error body is \`{statusCode, message, error}\`; a 400 names each offending field in \`message\` and
carries \`details: {fields: [{field, message}]}\`, a request validation (the body, query, path or headers do not fit the
operation's schema) and a business rule (an unknown tag, another company's stage) alike; each field by its dotted
path (\`title\`, \`persons_id.0.person_id\`, or \`body\`/\`query\`/\`request\` for the whole); no other error has
\`details\`.

**Rate limits.** Each key has a per-minute quota. Every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and
\`RateLimit-Reset\` (seconds until the window resets); a 429 adds \`Retry-After\`.

**Pagination.** Lists answer \`{total, records, next_cursor}\` and take \`skip\`, \`take\` and \`cursor\`: \`cursor\`
(the previous page's \`next_cursor\`) replaces \`skip\` and gives stable paging; \`next_cursor\` is null on the last page.
A \`take\` above a list's maximum is capped to it, as the chat list does; below 1 is a 400.

**Idempotency.** \`POST /leads\` and \`POST /deals\` take \`x-idempotency-key\` (or \`idempotency_key\` in the body; the
header wins). A finished creation with the same key answers the same record; one still processing, or one that failed
after starting, answers 409.

**Request ids.** Every response carries \`x-request-id\` (the caller's when it sent a well-formed one): quote it to support.

**Webhooks.** Each event is POSTed as \`{event_id, event_key, payload}\` with the Standard Webhooks headers
\`webhook-id\`, \`webhook-timestamp\` and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">\`
keyed with the subscription secret): verify these and reject old timestamps, which refuses replays. The spec's
\`x-svc-signature: sha256=<hex HMAC-SHA256 of the body>\` is sent too, but it signs the body alone and gives no replay
protection. Integrations manage their subscriptions under \`/webhooks\` (\`crm/webhooks.read\`, \`crm/webhooks.write\`);
\`GET /webhooks/event-types\` lists every event key with its payload's schema.`;

/** A tag without one fails the document's lint. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Chats: 'WhatsApp and Instagram conversations: chats, messages, scheduled messages, templates.',
  'Custom fields': 'The company’s custom fields of leads and deals.',
  Deals: 'Deals: create, read, update and list.',
  Files: 'Files linked to leads, deals, proposals and messages, and their signed download URLs.',
  Leads: 'Leads: create, read, update and list.',
  Proposals: 'Proposals of leads and deals, their items, attachments and documents.',
  Satisfaction: 'Links to the public satisfaction form.',
  Tasks: 'Tasks, their recurrence and subtasks.',
};

const ERROR_FIELDS = { statusCode: { type: 'integer' }, message: { type: 'string' }, error: { type: 'string' } };

const header = (description: string, schema: Json = { type: 'integer' }) => ({ description, schema });
const webhookHeader = (name: string, description: string, required = true) => ({
  name,
  in: 'header',
  required,
  description,
  schema: { type: 'string' },
});

/** Recorded by the e2e suite (`npm run examples:record -w test`), never by hand; the OpenAPI test checks them. */
export interface RecordedExample {
  status: string;
  response?: unknown;
  body?: unknown;
  contentType?: string;
  path?: Record<string, string>;
  query?: Record<string, string>;
}
export interface RecordedExamples {
  operations: Record<string, RecordedExample>;
  webhooks: Record<string, unknown>;
}

/** The recording has the URL's text. */
function typed(value: string, schema: Json | undefined): unknown {
  const type = schema?.type;
  if ((type === 'integer' || type === 'number') && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

function applyExamples(paths: Record<string, Record<string, Json>>, webhooks: Record<string, Json>, recorded: RecordedExamples): void {
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const example = recorded.operations[`${method.toUpperCase()} ${path}`];
      if (!example) continue;
      for (const param of (op.parameters ?? []) as Json[]) {
        const where = param.in === 'path' ? example.path : param.in === 'query' ? example.query : undefined;
        const value = where?.[param.name as string];
        if (value !== undefined) param.example = typed(value, param.schema as Json | undefined);
      }
      const content = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      const media = content?.[example.contentType ?? 'application/json'];
      if (media && example.body !== undefined) media.example = example.body;
      const answer = (op.responses as Record<string, Json>)[example.status];
      if (!answer || example.response === undefined) continue;
      answer.content ??= { 'application/json': {} };
      const answerMedia = (answer.content as Record<string, Json>)['application/json'];
      if (answerMedia) answerMedia.example = example.response;
    }
  }
  for (const [key, hook] of Object.entries(webhooks)) {
    const body = recorded.webhooks[key];
    const media = ((hook.post as Json)?.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
    if (body !== undefined && media?.['application/json']) media['application/json'].example = body;
  }
}

export const API_BASE_PATH = '/integrations/external';

/** Paths under `basePath` are written relative to the server entry that names it. */
export function assembleDocument(
  fragments: readonly OpenApiFragment[],
  info: { version: string; basePath?: string; examples?: RecordedExamples },
): Json {
  const basePath = info.basePath ?? API_BASE_PATH;
  const relative = (path: string) => (path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : path);
  const paths: Record<string, Record<string, Json>> = {};
  const webhooks: Record<string, Json> = {};
  const schemas: Record<string, Json> = {
    ErrorBody: {
      type: 'object',
      properties: ERROR_FIELDS,
      required: ['statusCode', 'message', 'error'],
      additionalProperties: false,
    },
    ValidationErrorBody: {
      type: 'object',
      description: 'A 400: the three fields of every error, and the offending fields.',
      properties: {
        ...ERROR_FIELDS,
        details: {
          type: 'object',
          properties: {
            fields: {
              type: 'array',
              minItems: 1,
              items: {
                type: 'object',
                properties: {
                  field: {
                    type: 'string',
                    description: 'Dotted path of the field (`title`, `tags.0`); `body`, `query` or `request` for the whole.',
                  },
                  message: { type: 'string', description: 'What is wrong with it, as `message` says it.' },
                },
                required: ['field', 'message'],
                additionalProperties: false,
              },
            },
          },
          required: ['fields'],
          additionalProperties: false,
        },
      },
      required: ['statusCode', 'message', 'error', 'details'],
      additionalProperties: false,
    },
  };
  const undocumented: string[] = [];
  for (const f of [...fragments, gatewayFragment()]) {
    for (const [served, ops] of Object.entries(f.paths)) {
      const path = relative(served);
      paths[path] ??= {};
      for (const [method, op] of Object.entries(ops)) {
        if (paths[path][method]) throw new Error(`${method.toUpperCase()} ${path} is documented by two services`);
        paths[path][method] = op;
      }
    }
    for (const [key, hook] of Object.entries(f.webhooks)) {
      if (webhooks[key]) throw new Error(`The webhook ${key} is documented by two services`);
      webhooks[key] = hook;
    }
    for (const [name, schema] of Object.entries(f.schemas)) {
      if (schemas[name] && JSON.stringify(schemas[name]) !== JSON.stringify(schema)) {
        throw new Error(`The schema ${name} differs between services`);
      }
      schemas[name] = schema;
    }
    undocumented.push(...f.undocumented.map((r) => `${r} (${f.service})`));
  }
  applyExamples(paths, webhooks, info.examples ?? (recordedExamples as RecordedExamples));
  const sorted = <T>(o: Record<string, T>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  const tags = [...new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((op) => (op.tags as string[]) ?? [])))].sort();
  return {
    openapi: '3.1.1',
    info: {
      title: 'CRM integration API',
      version: info.version,
      description: DESCRIPTION,
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: basePath, description: 'The gateway this document is served by.' }],
    security: [{ integrationKey: [] }],
    // Tag names are unique in a document.
    tags: [
      ...tags
        .filter((name) => name !== 'Webhooks')
        .map((name) => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name })),
      { name: 'Webhooks', description: 'Subscriptions, managed with the integration key, and the events POSTed to their URLs.' },
    ],
    paths: sorted(paths),
    webhooks: sorted(webhooks),
    components: {
      securitySchemes: {
        integrationKey: { type: 'http', scheme: 'bearer', description: 'An integration key (`svc_…`), not a JWT.' },
      },
      schemas: sorted(schemas),
      responses: Object.fromEntries(
        Object.entries(ERRORS).map(([status, description]) => [
          `Error${status}`,
          {
            description,
            headers: {
              'x-request-id': { $ref: '#/components/headers/x-request-id' },
              ...(status === '429' || status === '503' ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } } : {}),
            },
            content: {
              'application/json': { schema: { $ref: `#/components/schemas/${status === '400' ? 'ValidationErrorBody' : 'ErrorBody'}` } },
            },
          },
        ]),
      ),
      headers: {
        'RateLimit-Limit': header('Requests the key may make per minute.'),
        'RateLimit-Remaining': header('Requests left in the current window.'),
        'RateLimit-Reset': header('Seconds until the window resets.'),
        'x-request-id': header('Identifies the request in logs: quote it to support.', { type: 'string' }),
        'Retry-After': header('Seconds to wait before trying again (on a 429 always; on a 503 when the gateway knows).'),
      },
      parameters: {
        'x-svc-event': webhookHeader('x-svc-event', 'The event key.'),
        'x-svc-event-id': webhookHeader('x-svc-event-id', 'Equals the body’s event_id; identical on resends.', false),
        'x-svc-signature': webhookHeader(
          'x-svc-signature',
          '`sha256=` and the lowercase hex HMAC-SHA256 of the exact body bytes (the spec’s; no replay protection: verify webhook-signature).',
        ),
        'webhook-id': webhookHeader('webhook-id', 'The message id (Standard Webhooks).'),
        'webhook-timestamp': webhookHeader('webhook-timestamp', 'Unix seconds when the attempt was signed.'),
        'webhook-signature': webhookHeader('webhook-signature', '`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.'),
      },
    },
    ...(undocumented.length ? { 'x-undocumented-routes': undocumented.sort() } : {}),
  };
}
