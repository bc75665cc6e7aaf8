import { z } from 'zod';
import { INT4 } from '../numbers.js';
import { zodToInvalid } from './errors.js';

/** Parse at the edge: a request body becomes a typed value or a 400 naming the fields. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw zodToInvalid(result.error);
  return result.data;
}

/** `parse` for the query string: an error about the whole of it names the query, not the body. */
export function parseQuery<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw zodToInvalid(result.error, 'query');
  return result.data;
}

/**
 * The `skip` query parameter of a list: an integer, negatives become 0 (spec, Limits); beyond an int4 (what the
 * lists' offsets are read as) is a 400 naming it rather than Postgres's error.
 */
export const skipParam = () =>
  z.coerce
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .max(INT4.max, `must be at most ${INT4.max}`)
    .transform((n) => Math.max(0, n));

/**
 * The `take` query parameter of a list: an integer of at least 1; above `max` it is capped to `max` rather than
 * refused; not an integer or below 1 is a 400 naming it.
 */
export const takeParam = (max: number) =>
  z.coerce
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .transform((n) => Math.min(n, max));
