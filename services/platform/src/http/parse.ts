import type { z } from 'zod';
import { zodToInvalid } from './app.js';

/** Parse at the edge: a request part becomes a typed value or a 400 naming the fields. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw zodToInvalid(result.error);
  return result.data;
}
