import { localDocument } from '@svc/client/document';
import type { RecordedExample, RecordedExamples } from '@svc/platform/http/openapi-document';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * The contract test (decision 0101): every response the e2e client gets from `/integrations/external/*` and every
 * webhook body a test receiver gets is checked against the OpenAPI document, so the document cannot drift from the
 * code. A violation fails the call at once and is also kept for the root hook, so a violation inside a polling
 * helper that swallowed the error still fails its test.
 */
type Json = Record<string, any>;

export { localDocument };

/** Ajv's errors with what they name (the extra property, the missing one), at most ten. */
const describe = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .slice(0, 10)
    .map((e) => {
      const p = e.params as Record<string, unknown>;
      const what = p.additionalProperty ?? p.missingProperty ?? p.allowedValues ?? p.format;
      return `${e.instancePath || '(root)'} ${e.message}${what === undefined ? '' : ` (${JSON.stringify(what)})`}`;
    })
    .join('; ');

const GATEWAY_STATUSES = new Set([401, 404, 405, 408, 429, 503]);

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Record<string, { schema?: ValidateFunction; hasBody: boolean }>;
  /** The request body's schema per media type. */
  requests: Record<string, ValidateFunction>;
  /** Path and query parameters' schemas by `in:name`. */
  parameters: Record<string, ValidateFunction>;
}

export class ContractValidator {
  readonly doc: Json;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly operations: Operation[] = [];
  private readonly webhooks = new Map<string, ValidateFunction>();

  constructor(doc: Json = localDocument()) {
    this.doc = doc;
    addFormats.default(this.ajv);
    this.ajv.addSchema({ $id: 'doc', components: this.doc.components });
    const compile = (schema: Json) =>
      this.ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
    for (const [template, ops] of Object.entries(this.doc.paths as Record<string, Record<string, Json>>)) {
      const served = `${(this.doc.servers as { url: string }[])[0]?.url ?? ''}${template}`;
      const pattern = new RegExp(`^${served.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`);
      for (const [method, op] of Object.entries(ops)) {
        const responses: Operation['responses'] = {};
        for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
          const resolved = r.$ref ? this.doc.components.responses[r.$ref.split('/').pop()] : r;
          const schema = resolved.content?.['application/json']?.schema;
          responses[status] = { schema: schema ? compile(schema) : undefined, hasBody: Boolean(schema) };
        }
        const requests: Operation['requests'] = {};
        for (const [media, body] of Object.entries((op.requestBody?.content ?? {}) as Record<string, Json>)) {
          if (body.schema) requests[media] = compile(body.schema);
        }
        const parameters: Operation['parameters'] = {};
        for (const param of (op.parameters ?? []) as Json[]) parameters[`${param.in}:${param.name}`] = compile(param.schema ?? {});
        this.operations.push({ method: method.toUpperCase(), template, pattern, responses, requests, parameters });
      }
    }
    // A literal segment wins over a parameter (`/chats/unread-summary` is not `/chats/{id}`), as in the routers.
    const parameters = (o: Operation) => (o.template.match(/\{/g) ?? []).length;
    this.operations.sort((a, b) => parameters(a) - parameters(b));
    for (const [key, hook] of Object.entries(this.doc.webhooks as Record<string, Json>)) {
      this.webhooks.set(key, compile(hook.post.requestBody.content['application/json'].schema));
    }
  }

  /** The documented operation a request of the external API is, with its path parameters. */
  operation(method: string, path: string): { op: Operation; path: Record<string, string> } | undefined {
    for (const op of this.operations) {
      if (op.method !== method.toUpperCase()) continue;
      const m = op.pattern.exec(path);
      if (m) return { op, path: Object.fromEntries(Object.entries(m.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)])) };
    }
    return undefined;
  }

  /** What is wrong with an operation's recorded example (decision 0187), as ajv says it. */
  exampleProblems(key: string, example: RecordedExample): string[] {
    const [method = '', template = ''] = key.split(' ');
    const op = this.operations.find((o) => o.method === method && o.template === template);
    if (!op) return [`${key}: no such operation`];
    const problems: string[] = [];
    const check = (what: string, validate: ValidateFunction | undefined, value: unknown) => {
      if (!validate) problems.push(`${key}: ${what} is not documented`);
      else if (!validate(value)) problems.push(`${key}: ${what} does not match its schema: ${describe(validate.errors)}`);
    };
    if (example.body !== undefined)
      check(`the ${example.contentType ?? 'application/json'} body`, op.requests[example.contentType ?? 'application/json'], example.body);
    const answer = op.responses[example.status];
    if (!answer) problems.push(`${key}: the ${example.status} answer is not documented`);
    else if (answer.schema && example.response !== undefined) check(`the ${example.status} answer`, answer.schema, example.response);
    for (const [name, value] of Object.entries(example.path ?? {})) check(`path ${name}`, op.parameters[`path:${name}`], value);
    for (const [name, value] of Object.entries(example.query ?? {})) {
      const validate = op.parameters[`query:${name}`];
      // A query value arrives as text; a number or boolean parameter is checked as its schema's type.
      const typed = validate && !validate(value) && value !== '' && !Number.isNaN(Number(value)) ? Number(value) : value;
      check(`query ${name}`, validate, typed === 'true' ? true : typed === 'false' ? false : typed);
    }
    return problems;
  }

  /** Every operation of the document, by `METHOD template`. */
  operationKeys(): string[] {
    return this.operations.map((o) => `${o.method} ${o.template}`);
  }

  webhookProblems(key: string, body: unknown): string[] {
    const validate = this.webhooks.get(key);
    if (!validate) return [`webhook ${key}: not documented`];
    return validate(body) ? [] : [`webhook ${key}: does not match its schema: ${describe(validate.errors)}`];
  }

  /** What is wrong with this response of the external API, or undefined when the document describes it. */
  response(method: string, url: string, status: number, text: string, contentType: string | null): string | undefined {
    const path = url.split('?')[0] ?? url;
    if (!path.startsWith('/integrations/external/') || path === '/integrations/external/openapi.json') return undefined;
    const candidates = this.operations.filter((o) => o.pattern.test(path));
    // A literal segment wins over a parameter (`/webhooks/event-types` over `/webhooks/{id}`), as in the routers.
    const params = (o: Operation) => (o.template.match(/\{/g) ?? []).length;
    const op = candidates.filter((o) => o.method === method.toUpperCase()).sort((a, b) => params(a) - params(b))[0];
    const where = `${method} ${path} → ${status}`;
    if (!op) {
      // What the gateway answers before any route is chosen (no key, unknown path, rate limit, service down) is not a
      // route's answer; any other status came from a route the document lacks.
      if (GATEWAY_STATUSES.has(status)) return undefined;
      return `${where}: the route is missing from the OpenAPI document`;
    }
    const documented = op.responses[String(status)];
    if (!documented) return `${where}: status ${status} is not documented for ${op.method} ${op.template}`;
    if (!documented.hasBody) return undefined;
    if (!contentType?.startsWith('application/json')) return `${where}: content-type ${contentType} is not application/json`;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `${where}: the body is not JSON: ${text.slice(0, 200)}`;
    }
    if (documented.schema?.(body)) return undefined;
    return `${where}: the body does not match ${op.method} ${op.template}'s ${status} schema: ${describe(documented.schema?.errors)}`;
  }

  /** What is wrong with a webhook body, or undefined when the document describes it. */
  delivery(body: unknown): string | undefined {
    const key = (body as Json | undefined)?.event_key;
    const validate = typeof key === 'string' ? this.webhooks.get(key) : undefined;
    if (!validate) return `webhook ${String(key)}: the event is missing from the OpenAPI document's webhooks`;
    if (validate(body)) return undefined;
    return `webhook ${key}: the body does not match its schema: ${describe(validate.errors)}`;
  }
}

let validator: ContractValidator | undefined;
const contract = () => {
  validator ??= new ContractValidator();
  return validator;
};

/** Every violation of the run, with the test it happened in (support/contract-hooks.ts reports them at the end). */
export const violations: string[] = [];
let currentTest = '(outside a test)';
export const setCurrentTest = (title: string) => {
  currentTest = title;
};

/** What a request sent, for its operation's example: a JSON body, or the fields of a form (a file as its name). */
export interface SentRequest {
  body?: unknown;
  form?: Record<string, string>;
}

/** The first 2xx of each operation and the first delivery of each event key in this run (decision 0187). */
export const recorded: RecordedExamples = { operations: {}, webhooks: {} };

function record(method: string, url: string, status: number, text: string, sent: SentRequest | undefined): void {
  if (status < 200 || status > 299) return;
  const [path = '', search = ''] = url.split('?');
  const found = contract().operation(method, path);
  if (!found) return;
  const key = `${found.op.method} ${found.op.template}`;
  if (recorded.operations[key]) return;
  let response: unknown;
  try {
    response = text ? JSON.parse(text) : undefined;
  } catch {
    return;
  }
  const query = Object.fromEntries(new URLSearchParams(search));
  recorded.operations[key] = {
    status: String(status),
    ...(response === undefined ? {} : { response }),
    ...(sent?.form ? { body: sent.form, contentType: 'multipart/form-data' } : sent?.body !== undefined ? { body: sent.body } : {}),
    ...(Object.keys(found.path).length ? { path: found.path } : {}),
    ...(Object.keys(query).length ? { query } : {}),
  };
}

export function checkResponse(
  method: string,
  url: string,
  status: number,
  text: string,
  contentType: string | null,
  sent?: SentRequest,
): void {
  const problem = contract().response(method, url, status, text, contentType);
  if (!problem) {
    record(method, url, status, text, sent);
    return;
  }
  violations.push(`${currentTest}: ${problem}`);
  throw new Error(`Contract violation: ${problem}`);
}

/** Records (never throws: it runs inside the receiver's request handler) what is wrong with a webhook body. */
export function checkDelivery(body: unknown): void {
  const problem = contract().delivery(body);
  if (problem) violations.push(`${currentTest}: ${problem}`);
  const key = (body as Json | undefined)?.event_key;
  if (!problem && typeof key === 'string') recorded.webhooks[key] ??= body;
}

/** The validator of the document this process checks against. */
export const contractValidator = () => contract();
