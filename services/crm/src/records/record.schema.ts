import { z } from 'zod';

/** Field rules deliveries and contracts share (admin API bodies). */
export const userId = z.uuid('must be a UUID');
export const optionalUuid = z.uuid('must be a UUID').nullable().optional();
export const title = z
  .string({ message: 'must be 1 to 150 characters' })
  .trim()
  .min(1, 'must be 1 to 150 characters')
  .max(150, 'must be 1 to 150 characters');
export const description = z
  .string({ message: 'must be a string' })
  .trim()
  .max(5000, 'must be at most 5000 characters')
  .nullable()
  .optional();
export const reason = z.string({ message: 'must be a string' }).trim().max(2000, 'must be at most 2000 characters').nullable().optional();

/** An ISO 8601 date-time with `Z` or an offset, or a date alone (midnight UTC). */
export const dateTime = z.iso
  .datetime({ offset: true, message: 'must be an ISO 8601 date-time or date' })
  .or(z.iso.date({ message: 'must be an ISO 8601 date-time or date' }));

/** A date alone (`2026-12-31`): contract periods are whole days. */
export const dateOnly = z.iso.date({ message: 'must be an ISO 8601 date (YYYY-MM-DD)' });

export const toDate = (v: string | null | undefined): Date | null | undefined =>
  v === undefined ? undefined : v === null ? null : new Date(v);
