import { z } from 'zod';

/** Requests are validated and the OpenAPI document generated from the same schemas, so they cannot disagree. */
export type RouteMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseContract {
  description: string;
  /** `.meta({ id })` makes a named component of the document. */
  schema?: z.ZodType;
}

export interface RouteContract {
  method: RouteMethod;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  /** Checked before anything is parsed, so a key without it gets 403 whatever its body. */
  permission?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Lower-case names. */
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** A body the handler reads itself from `req.raw` (decision 0079). */
  streamedBody?: { contentType: string; schema: z.ZodType };
  /** The document adds the shared error responses. */
  responses: Readonly<Record<number, ResponseContract>>;
  errors?: readonly number[];
}

/** The payload inside the spec's envelope. */
export interface EventContract {
  key: string;
  summary: string;
  payload: z.ZodType;
}

export const route = <const C extends RouteContract>(contract: C): C => contract;
export const event = (contract: EventContract): EventContract => contract;

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface ContractInput<C extends RouteContract> {
  params: C['params'] extends z.ZodObject ? z.output<C['params']> : Record<string, string>;
  query: Out<C['query']>;
  headers: Out<C['headers']>;
  body: Out<C['body']>;
}

export const routerPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

export const page = <T extends z.ZodType>(records: T, id: string) =>
  z.object({ total: z.number().int(), records: z.array(records), next_cursor: z.string().nullable() }).meta({ id });

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
