import { localDocument } from '@svc/client/document';
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
}

class ContractValidator {
  readonly doc = localDocument() as Json;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly operations: Operation[] = [];
  private readonly webhooks = new Map<string, ValidateFunction>();

  constructor() {
    addFormats.default(this.ajv);
    this.ajv.addSchema({ $id: 'doc', components: this.doc.components });
    const compile = (schema: Json) =>
      this.ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
    for (const [template, ops] of Object.entries(this.doc.paths as Record<string, Record<string, Json>>)) {
      const pattern = new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`);
      for (const [method, op] of Object.entries(ops)) {
        const responses: Operation['responses'] = {};
        for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
          const resolved = r.$ref ? this.doc.components.responses[r.$ref.split('/').pop()] : r;
          const schema = resolved.content?.['application/json']?.schema;
          responses[status] = { schema: schema ? compile(schema) : undefined, hasBody: Boolean(schema) };
        }
        this.operations.push({ method: method.toUpperCase(), template, pattern, responses });
      }
    }
    for (const [key, hook] of Object.entries(this.doc.webhooks as Record<string, Json>)) {
      this.webhooks.set(key, compile(hook.post.requestBody.content['application/json'].schema));
    }
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

export function checkResponse(method: string, url: string, status: number, text: string, contentType: string | null): void {
  const problem = contract().response(method, url, status, text, contentType);
  if (!problem) return;
  violations.push(`${currentTest}: ${problem}`);
  throw new Error(`Contract violation: ${problem}`);
}

/** Records (never throws: it runs inside the receiver's request handler) what is wrong with a webhook body. */
export function checkDelivery(body: unknown): void {
  const problem = contract().delivery(body);
  if (problem) violations.push(`${currentTest}: ${problem}`);
}
