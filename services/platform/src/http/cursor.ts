import { invalidField, isUuid } from '../errors.js';

/** Opaque to clients; `at` is the creation time as the store wrote it, at its full precision. */
export const encodeCursor = (at: string, id: string): string => Buffer.from(JSON.stringify([at, id])).toString('base64url');

export function decodeCursor(cursor: string): { at: string; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'string' && !Number.isNaN(Date.parse(at)) && isUuid(id)) return { at, id };
  } catch {
    // falls through to the 400
  }
  throw invalidField('cursor', 'not a cursor of this list');
}
