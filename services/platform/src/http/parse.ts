import { z } from 'zod';
import { INT4 } from '../numbers.js';
import { zodToInvalid } from './errors.js';

export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw zodToInvalid(result.error);
  return result.data;
}

/** An error about the whole query names the query, not the body. */
export function parseQuery<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw zodToInvalid(result.error, 'query');
  return result.data;
}

/** Negatives become 0 (spec, Limits); beyond int4 is a 400 naming it rather than Postgres's error. */
export const skipParam = () =>
  z.coerce
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .max(INT4.max, `must be at most ${INT4.max}`)
    .transform((n) => Math.max(0, n));

/** Above `max` it is capped rather than refused. */
export const takeParam = (max: number) =>
  z.coerce
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .transform((n) => Math.min(n, max));
