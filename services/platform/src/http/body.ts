import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { AppError, invalidField } from '../errors.js';

/**
 * What text and bodies every service accepts (decision 0110), in one place both HTTP stacks (the integration
 * routes without Express and the Express admin app) call, so every service answers alike:
 * - a body is read only when the request has one; it must be `application/json` (or `+json`, charset utf-8 if
 *   named), with no content encoding: else 415. A streaming route (ApiRouter.stream) gets any other body unread.
 * - over the size limit: 413; bytes that are not UTF-8, malformed JSON, or JSON that is not an object: 400.
 * - no string or key anywhere in it (nor in the query) may hold a NUL or an unpaired UTF-16 surrogate: Postgres
 *   stores neither in text or jsonb, so they are refused at the edge with a 400 naming the field.
 * - PUT and PATCH carry a body; a POST without one (an action such as `/read`) reaches its route with none.
 */

export const TEXT_RULE = 'must not contain NUL characters or unpaired UTF-16 surrogates';
export const NOT_JSON = 'content-type: must be application/json';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/i;
const BODY_REQUIRED = new Set(['PUT', 'PATCH']);

export const hasBody = (req: IncomingMessage) =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

const unsupported = (message: string) => new AppError('unsupported_media_type', message);
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** True when `text` can be stored as Postgres text: no NUL, no unpaired surrogate. */
export const isStorableText = (text: string) => !UNSTORABLE.test(text);
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const fieldName = (key: string) => (isStorableText(key) ? key : JSON.stringify(key).slice(1, -1));

/** Throws a 400 naming the first string or key of `value` that Postgres cannot store. */
export function checkText(value: unknown, path = ''): void {
  if (typeof value === 'string') {
    if (!isStorableText(value)) throw invalidField(path || 'body', TEXT_RULE);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) checkText(value[i], path ? `${path}.${i}` : String(i));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const at = path ? `${path}.${fieldName(key)}` : fieldName(key);
      if (!isStorableText(key)) throw invalidField(at, TEXT_RULE);
      checkText(inner, at);
    }
  }
}

export interface BodyOptions {
  /** Largest accepted body, as raw-body takes it ('1mb'). */
  limit: string;
  /** A streaming route: a body that is not JSON (a multipart upload) is left unread for it to read or refuse. */
  streams?: boolean;
}

/** The request's body is the route's to read (a body that is not JSON on a streaming route). */
export const UNREAD = Symbol('unread');

/** Reads and checks the request's body: the parsed JSON object, undefined without a body, or UNREAD. */
export async function readBody(req: IncomingMessage, options: BodyOptions): Promise<unknown> {
  if (!hasBody(req)) {
    if (BODY_REQUIRED.has(req.method ?? '')) throw invalidField('body', 'must be a JSON object');
    return undefined;
  }
  const type = req.headers['content-type'] ?? '';
  if (options.streams && !JSON_TYPE.test(type)) return UNREAD;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
    throw unsupported('content-encoding: only identity is accepted');
  if (!JSON_TYPE.test(type)) throw unsupported(NOT_JSON);
  const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') throw unsupported('content-type: charset must be utf-8');
  let bytes: Buffer;
  try {
    bytes = await getRawBody(req, { limit: options.limit, length: req.headers['content-length'] });
  } catch (err) {
    const kind = err && typeof err === 'object' && 'type' in err ? err.type : undefined;
    if (kind === 'entity.too.large') throw new AppError('too_large', `body: larger than ${options.limit}`);
    throw invalidField('body', 'could not be read');
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw invalidField('body', 'must be UTF-8');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalidField('body', 'malformed JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidField('body', 'must be a JSON object');
  // A NUL or a surrogate reaches a JSON string only as a \u escape; text without one needs no walk.
  if (text.includes('\\u')) checkText(body);
  return body;
}

export const malformedPath = () => invalidField('path', 'malformed percent-encoding');

/** Throws a 400 for a path whose percent-encoding is broken or decodes to text Postgres cannot store. */
export function checkPath(path: string): void {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw malformedPath();
  }
  if (!isStorableText(decoded)) throw invalidField('path', TEXT_RULE);
}

/** Throws a 400 naming the first query parameter whose name or value Postgres cannot store. */
export function checkQuery(query: Record<string, unknown>): void {
  checkText(query);
}

export const NOT_UTF8 = 'must be UTF-8';
export const CONTROL_RULE = 'must not contain control characters';
/** C0 controls, DEL and C1 controls (Unicode's Cc): a tab, a line break, a bell or an escape. */
const CONTROL = /\p{Cc}/u;
/** What a multipart parser (busboy) makes of bytes that are not UTF-8 in a part declared or defaulted to UTF-8. */
const REPLACEMENT = '\ufffd';

/**
 * The text rule of JSON bodies (decision 0110) applied to the text of a multipart form (decision 0135): a field's
 * value as the parser decoded it, or a part's file name. Throws a 400 naming `field` when the text is not UTF-8
 * (the parser decodes bytes that are not UTF-8 to U+FFFD, so a U+FFFD is refused as such: a client has no reason
 * to send one), holds a NUL or an unpaired surrogate, or, with `kind` `name` (a file name, an identifier), any
 * control character. `text` (a message body) keeps line breaks and tabs, as a JSON string does.
 */
export function checkFormText(text: string, field: string, kind: 'text' | 'name' = 'text'): void {
  const at = CONTROL.test(field) ? JSON.stringify(field).slice(1, -1) : fieldName(field);
  if (text.includes(REPLACEMENT)) throw invalidField(at, NOT_UTF8);
  if (!isStorableText(text)) throw invalidField(at, TEXT_RULE);
  if (kind === 'name' && CONTROL.test(text)) throw invalidField(at, CONTROL_RULE);
}

/** A multipart form's field (decision 0135): its name and its value follow checkFormText. */
export function checkFormField(name: string, value: string, kind: 'text' | 'name' = 'text'): void {
  checkFormText(name, name, 'name');
  checkFormText(value, name, kind);
}
