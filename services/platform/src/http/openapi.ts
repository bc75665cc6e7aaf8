import { z } from 'zod';
import type { EventContract, RouteContract } from './contract.js';

type Json = Record<string, unknown>;

/**
 * Served at `GET /openapi.json` and merged by the gateway (decision 0100); routes no contract describes are listed
 * rather than hidden.
 */
export interface OpenApiFragment {
  service: string;
  paths: Record<string, Record<string, Json>>;
  webhooks: Record<string, Json>;
  schemas: Record<string, Json>;
  undocumented: string[];
}

export interface DocumentedMount {
  prefix: string;
  contracts: readonly RouteContract[];
  undocumented: readonly string[];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect); `.meta({ id })` schemas become components. */
class SchemaSink {
  readonly schemas: Record<string, Json> = {};

  convert(schema: z.ZodType, io: 'input' | 'output'): Json {
    const converted = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
    delete converted.$schema;
    const defs = (converted.$defs ?? {}) as Record<string, Json>;
    delete converted.$defs;
    // Input accepts what an output of the same id may not (defaults, transforms).
    const name = (id: string) => (io === 'input' ? `${id}Input` : id);
    const rewrite = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (!node || typeof node !== 'object') return node;
      const out: Json = {};
      for (const [k, v] of Object.entries(node)) {
        out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/') ? ref(name(v.slice(8))).$ref : rewrite(v);
      }
      return out;
    };
    for (const [id, def] of Object.entries(defs)) {
      const component = rewrite(def) as Json;
      const existing = this.schemas[name(id)];
      if (existing && JSON.stringify(existing) !== JSON.stringify(component)) {
        throw new Error(`Two different schemas have the id ${name(id)}`);
      }
      this.schemas[name(id)] = component;
    }
    return rewrite(converted) as Json;
  }
}

function parameters(c: RouteContract, sink: SchemaSink): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query' | 'header', shape: z.ZodObject | undefined) => {
    if (!shape) return;
    const object = sink.convert(shape, 'input');
    const props = (object.properties ?? {}) as Record<string, Json>;
    const required = new Set((object.required ?? []) as string[]);
    for (const [name, schema] of Object.entries(props)) {
      const { description, ...rest } = schema;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  };
  const pathNames = [...c.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  if (c.params) add('path', c.params);
  else for (const name of pathNames) out.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  add('query', c.query);
  add('header', c.headers);
  return out;
}

function operation(c: RouteContract, sink: SchemaSink): Json {
  const responses: Json = {};
  for (const [status, r] of Object.entries(c.responses)) {
    responses[status] = {
      description: r.description,
      headers: successHeaders,
      ...(r.schema ? { content: { 'application/json': { schema: sink.convert(r.schema, 'output') } } } : {}),
    };
  }
  // Any named record may be missing in the key's company (404); the gateway may answer 408 or 431 on any route.
  const errors = new Set<number>([401, 404, 408, 429, 431, 500, 503, ...(c.errors ?? [])]);
  if (c.body || c.streamedBody || c.query || c.headers || c.params) errors.add(400);
  if (c.body || c.streamedBody) for (const status of [413, 415]) errors.add(status);
  if (c.permission) errors.add(403);
  for (const status of [...errors].sort()) responses[status] = { $ref: `#/components/responses/Error${status}` };
  return {
    operationId: c.operationId,
    summary: c.summary,
    ...(c.description ? { description: c.description } : {}),
    tags: [...c.tags],
    ...(c.permission ? { 'x-permission': c.permission } : {}),
    parameters: parameters(c, sink),
    ...(c.body || c.streamedBody
      ? {
          requestBody: {
            required: true,
            content: {
              ...(c.body ? { 'application/json': { schema: sink.convert(c.body, 'input') } } : {}),
              ...(c.streamedBody ? { [c.streamedBody.contentType]: { schema: sink.convert(c.streamedBody.schema, 'input') } } : {}),
            },
          },
        }
      : {}),
    responses,
  };
}

const successHeaders = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimit-Limit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimit-Remaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimit-Reset' },
  'x-request-id': { $ref: '#/components/headers/x-request-id' },
};

function webhook(e: EventContract, sink: SchemaSink): Json {
  const envelope = z.object({
    event_id: z.string().optional().meta({ description: 'Opaque, stable across resends; absent in non-durable deliveries.' }),
    event_key: z.literal(e.key),
    payload: e.payload,
  });
  return {
    post: {
      operationId: `webhook_${e.key.replace(/\W/g, '_')}`,
      summary: e.summary,
      tags: ['Webhooks'],
      parameters: [
        { $ref: '#/components/parameters/x-svc-event' },
        { $ref: '#/components/parameters/x-svc-event-id' },
        { $ref: '#/components/parameters/x-svc-signature' },
        { $ref: '#/components/parameters/webhook-id' },
        { $ref: '#/components/parameters/webhook-timestamp' },
        { $ref: '#/components/parameters/webhook-signature' },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: sink.convert(envelope, 'output') } } },
      responses: { '2XX': { description: 'Any 2xx confirms the delivery (a body over 1 MB fails it).' } },
    },
  };
}

export function serviceFragment(
  service: string,
  mounts: readonly DocumentedMount[],
  events: readonly EventContract[] = [],
): OpenApiFragment {
  const sink = new SchemaSink();
  const paths: OpenApiFragment['paths'] = {};
  const undocumented: string[] = [];
  for (const mount of mounts) {
    for (const c of mount.contracts) {
      const path = `${mount.prefix}${c.path}`;
      paths[path] ??= {};
      if (paths[path][c.method]) throw new Error(`${c.method.toUpperCase()} ${path} has two contracts`);
      paths[path][c.method] = operation(c, sink);
    }
    undocumented.push(...mount.undocumented.map((r) => r.replace(' ', ` ${mount.prefix}`)));
  }
  const webhooks: OpenApiFragment['webhooks'] = {};
  for (const e of events) webhooks[e.key] = webhook(e, sink);
  return { service, paths, webhooks, schemas: sink.schemas, undocumented };
}
