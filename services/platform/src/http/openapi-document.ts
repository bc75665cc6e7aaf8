import type { OpenApiFragment } from './openapi.js';

type Json = Record<string, unknown>;

/**
 * The spec's error table, one shared response per status (every body is `{statusCode, message, error}`; every 400
 * adds `details.fields`, decisions 0141 and 0163).
 */
const ERRORS: Record<number, string> = {
  400:
    'Invalid payload or business rule; `message` names each offending field (`title: must be 1 to 150 characters`) ' +
    'and `details.fields` lists the same fields as `{field, message}`.',
  401: 'Key missing, invalid, inactive or expired, or the Origin (else Referer) host is not the key’s allowed_domain.',
  403: 'The key (or the user who created it) lacks the permission the operation needs.',
  404: 'The resource does not exist in the key’s company (another company’s record is 404, never 403).',
  409: 'An idempotent creation with this key is still processing, or failed after starting: use a new key.',
  408: 'The request body stalled (nothing arrived for the gateway’s body idle timeout); nothing was written.',
  413: 'The body is larger than the limit (1 MB of JSON, or an upload over its documented size); the upload ended as that byte arrived and nothing was stored.',
  415: 'The body is not `application/json` (utf-8, no `Content-Encoding`), or not `multipart/form-data` where a route takes files.',
  431: 'The request line or headers are larger than 16 KB.',
  429: 'The key’s per-minute request limit is exceeded; `Retry-After` says when to try again.',
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

**Webhooks.** Each event is POSTed as \`{event_id, event_key, payload}\` with \`x-svc-signature: sha256=<hex HMAC-SHA256 of
the body>\` keyed with the subscription secret, and the timestamped \`webhook-id\`, \`webhook-timestamp\` and
\`webhook-signature\` headers (verify these, and reject old timestamps, to refuse replays).`;

const ERROR_FIELDS = { statusCode: { type: 'integer' }, message: { type: 'string' }, error: { type: 'string' } };

const header = (description: string, schema: Json = { type: 'integer' }) => ({ description, schema });
const webhookHeader = (name: string, description: string, required = true) => ({
  name,
  in: 'header',
  required,
  description,
  schema: { type: 'string' },
});

/** The gateway's whole document: every service's fragment merged, plus the parts all operations share. */
export function assembleDocument(fragments: readonly OpenApiFragment[], info: { version: string; serverUrl?: string }): Json {
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
  for (const f of fragments) {
    for (const [path, ops] of Object.entries(f.paths)) {
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
  const sorted = <T>(o: Record<string, T>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  const tags = [...new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((op) => (op.tags as string[]) ?? [])))].sort();
  return {
    openapi: '3.1.1',
    info: { title: 'CRM integration API', version: info.version, description: DESCRIPTION },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    security: [{ integrationKey: [] }],
    tags: [...tags.map((name) => ({ name })), { name: 'Webhooks', description: 'Events POSTed to subscription URLs.' }],
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
            headers: { 'x-request-id': { $ref: '#/components/headers/x-request-id' } },
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
      },
      parameters: {
        'x-svc-event': webhookHeader('x-svc-event', 'The event key.'),
        'x-svc-event-id': webhookHeader('x-svc-event-id', 'Equals the body’s event_id; identical on resends.', false),
        'x-svc-signature': webhookHeader('x-svc-signature', '`sha256=` and the lowercase hex HMAC-SHA256 of the exact body bytes.'),
        'webhook-id': webhookHeader('webhook-id', 'The message id (Standard Webhooks).'),
        'webhook-timestamp': webhookHeader('webhook-timestamp', 'Unix seconds when the attempt was signed.'),
        'webhook-signature': webhookHeader('webhook-signature', '`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.'),
      },
    },
    ...(undocumented.length ? { 'x-undocumented-routes': undocumented.sort() } : {}),
  };
}
