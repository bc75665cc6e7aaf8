import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { AppError, invalidField } from '../errors.js';

/**
 * What every service accepts, in one place for both HTTP stacks (decision 0110). NUL and unpaired surrogates are
 * refused at the edge: Postgres stores neither in text or jsonb.
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

export const isStorableText = (text: string) => !UNSTORABLE.test(text);
const UNSTORABLE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const fieldName = (key: string) => (isStorableText(key) ? key : JSON.stringify(key).slice(1, -1));

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
  /** As raw-body takes it ('1mb'). */
  limit: string;
  streams?: boolean;
}

/** A body that is not JSON on a streaming route: the route's to read. */
export const UNREAD = Symbol('unread');

/** The parsed JSON object, undefined without a body, or UNREAD. */
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
  if (text.includes('\\u')) checkText(body);
  return body;
}

export const malformedPath = () => invalidField('path', 'malformed percent-encoding');

export function checkPath(path: string): void {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw malformedPath();
  }
  if (!isStorableText(decoded)) throw invalidField('path', TEXT_RULE);
}

export function checkQuery(query: Record<string, unknown>): void {
  checkText(query);
}

export const NOT_UTF8 = 'must be UTF-8';
export const CONTROL_RULE = 'must not contain control characters';
/** Unicode's Cc: C0, DEL and C1. */
const CONTROL = /\p{Cc}/u;
/** busboy decodes bytes that are not UTF-8 to this. */
const REPLACEMENT = '\ufffd';

/**
 * Decision 0110's text rule for multipart text (decision 0135). A U+FFFD is refused as bytes that were not UTF-8; `name`
 * also refuses any control character, `text` keeps line breaks and tabs.
 */
export function checkFormText(text: string, field: string, kind: 'text' | 'name' = 'text'): void {
  const at = CONTROL.test(field) ? JSON.stringify(field).slice(1, -1) : fieldName(field);
  if (text.includes(REPLACEMENT)) throw invalidField(at, NOT_UTF8);
  if (!isStorableText(text)) throw invalidField(at, TEXT_RULE);
  if (kind === 'name' && CONTROL.test(text)) throw invalidField(at, CONTROL_RULE);
}

export function checkFormField(name: string, value: string, kind: 'text' | 'name' = 'text'): void {
  checkFormText(name, name, 'name');
  checkFormText(value, name, kind);
}
