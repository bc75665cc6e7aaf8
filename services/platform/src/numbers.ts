import { z } from 'zod';

/**
 * The ranges of the columns numbers are stored in : a number from a path, query or body is checked
 * against the range of what stores it before it reaches Postgres, which would refuse it with an error (SQLSTATE
 * 22003) a route cannot name a field from. A code no record can have is a 404; any other number a 400 naming it.
 */
export const INT2 = { min: -32_768, max: 32_767 } as const;
export const INT4 = { min: -2_147_483_648, max: 2_147_483_647 } as const;
/** What a JavaScript number holds exactly: an int8 column beyond it is never written from JSON. */
export const INT8_SAFE = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER } as const;

/** The largest value of a `numeric(precision, scale)` column. */
export const numericMax = (precision: number, scale: number): number =>
  Number(`${'9'.repeat(precision - scale)}.${'9'.repeat(scale) || '0'}`);

const CODE = /^[1-9]\d{0,9}$/;

/**
 * A per-company record code (an int4 column, numbered from 1) written in a path or query, or null when the text can
 * name no record: not a positive decimal, or beyond the column's range (a 404 for the caller, like an unknown one).
 */
export function codeOf(text: string): number | null {
  if (!CODE.test(text)) return null;
  const n = Number(text);
  return n <= INT4.max ? n : null;
}

/**
 * An integer of a JSON body in `[min, max]` (defaults to the int4 column's range), with one message for every
 * failure so the 400 names the field and its range.
 */
export const intField = (min: number = INT4.min, max: number = INT4.max, message = `must be an integer from ${min} to ${max}`) =>
  z.number({ message }).int(message).min(min, message).max(max, message);

/** `intField` for a query parameter (text). */
export const intQuery = (min: number = INT4.min, max: number = INT4.max, message = `must be an integer from ${min} to ${max}`) =>
  z.coerce.number({ message }).int(message).min(min, message).max(max, message);
