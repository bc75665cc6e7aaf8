import { z } from 'zod';

/**
 * A route of the external API declared once (decision 0100): the router validates requests with these schemas
 * and the OpenAPI document is generated from the same ones, so the two cannot disagree.
 */
export type RouteMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseContract {
  description: string;
  /** The body; a schema with `.meta({ id })` becomes a named component of the document. */
  schema?: z.ZodType;
}

export interface RouteContract {
  method: RouteMethod;
  /** Relative to the mount prefix, with OpenAPI parameters: `/leads/{ref}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  /** Checked before anything is parsed, so a key without it gets 403 whatever its body. */
  permission?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Request headers the route reads (lower-case names). */
  headers?: z.ZodObject;
  body?: z.ZodType;
  /**
   * A body the handler reads itself from `req.raw` as it arrives (a multipart upload, served with `ApiRouter.stream`):
   * the document shows it with this media type and schema (decision 0079).
   */
  streamedBody?: { contentType: string; schema: z.ZodType };
  /** Success responses; the error responses every route shares are added by the document. */
  responses: Readonly<Record<number, ResponseContract>>;
  /** Error statuses besides the shared ones (409 of an idempotent creation). */
  errors?: readonly number[];
}

/** An event key's webhook body: the payload inside the spec's envelope `{event_id?, event_key, payload}`. */
export interface EventContract {
  key: string;
  summary: string;
  payload: z.ZodType;
}

export const route = <const C extends RouteContract>(contract: C): C => contract;
export const event = (contract: EventContract): EventContract => contract;

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a contract's handler receives: the request with its parts parsed by the contract's schemas. */
export interface ContractInput<C extends RouteContract> {
  params: C['params'] extends z.ZodObject ? z.output<C['params']> : Record<string, string>;
  query: Out<C['query']>;
  headers: Out<C['headers']>;
  body: Out<C['body']>;
}

/** `/leads/{ref}` → `/leads/:ref`, the router's syntax. */
export const routerPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

/** The response of every list: `{total, records, next_cursor}` (architecture, Conventions), named `id` in the document. */
export const page = <T extends z.ZodType>(records: T, id: string) =>
  z.object({ total: z.number().int(), records: z.array(records), next_cursor: z.string().nullable() }).meta({ id });

/** `x-idempotency-key` of a write that runs once per key (crm's creations, chat's sends; 1 to 255 characters). */
export const idempotencyKeyHeader = (description: string) =>
  z.object({
    'x-idempotency-key': z
      .string()
      .trim()
      .min(1, 'must be 1 to 255 characters')
      .max(255, 'must be 1 to 255 characters')
      .optional()
      .meta({ description }),
  });
