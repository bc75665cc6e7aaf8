import { z } from 'zod';

/**
 * Numbers are checked against their column's range at the edge: Postgres's SQLSTATE 22003 names no field. A code no
 * record can have is a 404; any other number a 400 naming it.
 */
export const INT2 = { min: -32_768, max: 32_767 } as const;
export const INT4 = { min: -2_147_483_648, max: 2_147_483_647 } as const;
/** An int8 column beyond it is never written from JSON. */
export const INT8_SAFE = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER } as const;

export const numericMax = (precision: number, scale: number): number =>
  Number(`${'9'.repeat(precision - scale)}.${'9'.repeat(scale) || '0'}`);

const CODE = /^[1-9]\d{0,9}$/;

/** Null when the text can name no record (a 404 for the caller, like an unknown code). */
export function codeOf(text: string): number | null {
  if (!CODE.test(text)) return null;
  const n = Number(text);
  return n <= INT4.max ? n : null;
}

/** Defaults to int4; one message for every failure so the 400 names the field and its range. */
export const intField = (min: number = INT4.min, max: number = INT4.max, message = `must be an integer from ${min} to ${max}`) =>
  z.number({ message }).int(message).min(min, message).max(max, message);

export const intQuery = (min: number = INT4.min, max: number = INT4.max, message = `must be an integer from ${min} to ${max}`) =>
  z.coerce.number({ message }).int(message).min(min, message).max(max, message);
