import { invalidField, isUuid } from '../errors.js';

/**
 * The `cursor` of a list ordered by `(created_at, id)`: the last record's pair, opaque to clients (base64url of a
 * JSON pair). `at` is the creation time as the store wrote it, to the microsecond where it keeps them.
 */
export const encodeCursor = (at: string, id: string): string => Buffer.from(JSON.stringify([at, id])).toString('base64url');

/** The pair of a cursor this list gave, else a 400 naming `cursor`. */
export function decodeCursor(cursor: string): { at: string; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'string' && !Number.isNaN(Date.parse(at)) && isUuid(id)) return { at, id };
  } catch {
    // falls through to the 400
  }
  throw invalidField('cursor', 'not a cursor of this list');
}
