import type { IncomingMessage } from 'node:http';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { AppError, invalidField } from '../errors.js';
import { CONTROL_RULE, checkFormField, checkFormText } from './body.js';

/**
 * The one multipart/form-data reader of every service (decision 0170): busboy parses the request as it arrives, and
 * every refusal is the same 400 wherever the form is read (files' uploads and proposal attachments, chat's sends and
 * scheduled sends):
 * - not multipart, or without a boundary: `body: must be multipart/form-data with a boundary`;
 * - a part header holding a raw control byte (busboy drops such a part as malformed): 400 naming the part
 *   (`file.filename: must not contain control characters`), found before busboy sees the header;
 * - the text of fields and file names: the multipart text rule (decision 0135);
 * - a field over its size, too many fields, files or parts, or bytes that are not multipart: `body: …`.
 */

export interface MultipartOptions {
  limits: { fileSize: number; files: number; fields: number; fieldSize: number; parts?: number };
  /** How field values are checked (decision 0135): `name` for identifiers, `text` for free text. */
  fieldKind: 'text' | 'name';
}

export interface FileInfo {
  filename: string | undefined;
  mimeType: string;
}

export interface MultipartHandlers {
  /** A field that passed the text rule. */
  field(name: string, value: string): void;
  /** A file part whose name passed the text rule: the handler reads or resumes `stream`. */
  file(name: string, stream: Readable, info: FileInfo): void;
  /** The first refusal (always an AppError); nothing is handed on after it and the rest of the request is discarded. */
  error(err: AppError): void;
  /** The whole form was read without a refusal. */
  close(): void;
}

export interface MultipartReader {
  /** Stops reading with the consumer's own refusal: the rest of the request is discarded, `error` gets `err`. */
  fail(err: AppError): void;
}

export const NO_BOUNDARY = 'must be multipart/form-data with a boundary';
const MALFORMED = 'malformed multipart/form-data';
const BOUNDARY = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i;

export const isMultipart = (req: IncomingMessage) => /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');

/** Reads a multipart/form-data request as it arrives, handing each field and file to `on` (see the module's note). */
export function readMultipart(req: IncomingMessage, options: MultipartOptions, on: MultipartHandlers): MultipartReader {
  let failed = false;
  let parser: busboy.Busboy | undefined;
  let guard: PartHeaderGuard | undefined;
  const fail = (err: AppError) => {
    if (failed) return;
    failed = true;
    if (guard) req.unpipe(guard);
    else if (parser) req.unpipe(parser);
    // Read to the end so the client, which may still be sending, gets the answer rather than a reset connection.
    req.resume();
    on.error(err);
  };
  const { limits } = options;
  try {
    parser = busboy({
      headers: req.headers,
      // File names are UTF-8 (busboy's default for header parameters is latin1, which turns "é" into "Ã©").
      defParamCharset: 'utf8',
      // One byte over a file's limit tells a file of exactly the limit from a larger one (busboy's `limit` event).
      limits: { ...limits, fileSize: limits.fileSize + 1, parts: limits.parts ?? limits.files + limits.fields },
    });
  } catch {
    fail(invalidField('body', NO_BOUNDARY));
    return { fail };
  }
  const bb = parser;
  const refuse = (check: () => void): boolean => {
    try {
      check();
      return false;
    } catch (err) {
      fail(err instanceof AppError ? err : invalidField('body', MALFORMED));
      return true;
    }
  };
  bb.on('field', (name, value, info) => {
    if (failed) return;
    if (info.valueTruncated) return fail(invalidField(fieldLabel(name), `must be at most ${limits.fieldSize} bytes`));
    if (refuse(() => checkFormField(name, value, options.fieldKind))) return;
    on.field(name, value);
  });
  bb.on('file', (name, stream, info) => {
    if (failed || (info.filename !== undefined && refuse(() => checkFormText(info.filename!, `${name}.filename`, 'name'))))
      return void stream.resume();
    on.file(name, stream, { filename: info.filename, mimeType: info.mimeType });
  });
  bb.on('filesLimit', () => fail(invalidField('body', `at most ${limits.files} ${limits.files === 1 ? 'file' : 'files'}`)));
  bb.on('fieldsLimit', () => fail(invalidField('body', `at most ${limits.fields} fields`)));
  bb.on('partsLimit', () => fail(invalidField('body', 'too many parts')));
  bb.on('error', () => fail(invalidField('body', MALFORMED)));
  bb.on('close', () => {
    if (!failed) on.close();
  });
  const boundary = BOUNDARY.exec(req.headers['content-type'] ?? '');
  const value = boundary?.[1] ?? boundary?.[2];
  if (value) {
    guard = new PartHeaderGuard(value);
    guard.on('error', (err) => fail(err instanceof AppError ? err : invalidField('body', MALFORMED)));
    req.pipe(guard).pipe(bb);
  } else req.pipe(bb);
  return { fail };
}

const fieldLabel = (name: string) => (/\p{Cc}/u.test(name) ? JSON.stringify(name).slice(1, -1) : name);

/** Longest part header looked at: busboy refuses a longer one itself. */
const HEADER_LIMIT = 16 * 1024 + 4;
const HEADER_END = Buffer.from('\r\n\r\n');
/** Control bytes busboy refuses in a header line (a tab is allowed there, and refused later by the text rule). */
const RAW_CONTROL = /[^\P{Cc}\t\x80-\x9f]/u;

/**
 * Passes the body through unchanged, holding each part's header until it is whole and refusing one that holds a raw
 * control byte with a 400 naming the part, since busboy would only drop it as malformed. File bytes are forwarded
 * at once; only the delimiter is searched for in them.
 */
class PartHeaderGuard extends Transform {
  private readonly delimiter: Buffer;
  /** The last bytes seen in a part's body (a delimiter may span chunks); the stream starts as if after a CRLF. */
  private carry = Buffer.from('\r\n');
  private header: Buffer | null = null;
  private passThrough = false;

  constructor(boundary: string) {
    super();
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.scan(chunk);
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  private scan(input: Buffer): void {
    let chunk = input;
    while (chunk.length > 0) {
      if (this.passThrough) {
        this.push(chunk);
        return;
      }
      if (this.header === null) {
        // A delimiter across the previous chunk's end, else one inside this chunk: file bytes are never copied.
        const keep = this.delimiter.length - 1;
        const edge = Buffer.concat([this.carry, chunk.subarray(0, keep)]);
        const across = edge.indexOf(this.delimiter);
        const inside = across < 0 ? chunk.indexOf(this.delimiter) : -1;
        if (across < 0 && inside < 0) {
          this.push(chunk);
          this.carry = Buffer.from(
            chunk.length >= keep ? chunk.subarray(chunk.length - keep) : edge.subarray(Math.max(0, edge.length - keep)),
          );
          return;
        }
        const end = across >= 0 ? across + this.delimiter.length - this.carry.length : inside + this.delimiter.length;
        this.push(chunk.subarray(0, end));
        this.header = Buffer.alloc(0);
        chunk = chunk.subarray(end);
        continue;
      }
      const header: Buffer = Buffer.concat([this.header, chunk]);
      if (header.length >= 2 && header[0] === 0x2d && header[1] === 0x2d) {
        // The closing delimiter: the rest is the epilogue.
        this.passThrough = true;
        this.push(header);
        return;
      }
      const at = header.indexOf(HEADER_END);
      if (at < 0) {
        if (header.length > HEADER_LIMIT) {
          this.passThrough = true;
          this.push(header);
          return;
        }
        this.header = header;
        return;
      }
      checkPartHeader(header.subarray(0, at + 2));
      this.push(header.subarray(0, at + HEADER_END.length));
      this.header = null;
      this.carry = Buffer.alloc(0);
      chunk = header.subarray(at + HEADER_END.length);
    }
  }
}

/**
 * Throws a 400 naming the part when its raw header holds a control byte: in the file name (the text rule's
 * `<part>.filename` answer), in the part's name, or elsewhere in the header.
 */
export function checkPartHeader(raw: Buffer): void {
  const text = raw.toString('latin1');
  const start = /(?:^|\r\n)content-disposition[ \t]*:/i.exec(text);
  const disposition = start ? dispositionParams(text, start.index + start[0].length) : undefined;
  const utf8 = (latin1: string) => Buffer.from(latin1, 'latin1').toString('utf8');
  const name = disposition?.params.name !== undefined ? utf8(disposition.params.name) : undefined;
  if (name !== undefined && RAW_CONTROL.test(disposition!.params.name!)) checkFormText(name, name, 'name');
  for (const key of ['filename', 'filename*'])
    if (disposition?.params[key] !== undefined && RAW_CONTROL.test(disposition.params[key]))
      checkFormText(utf8(disposition.params[key]), `${name ?? 'file'}.filename`, 'name');
  // A quote left open takes the rest of the header: a line break in the file name.
  if (disposition?.openQuote === 'filename' || disposition?.openQuote === 'filename*')
    throw invalidField(`${fieldLabel(name ?? 'file')}.filename`, CONTROL_RULE);
  // A control byte elsewhere in the header (line breaks between header lines are the header's own).
  if (!RAW_CONTROL.test(text.replaceAll('\r\n', ''))) return;
  throw invalidField(name !== undefined ? fieldLabel(name) : 'body', `its part header ${CONTROL_RULE}`);
}

/**
 * The parameters of a Content-Disposition value starting at `from`, read as busboy reads them (quoted strings with
 * backslash escapes), except that a CR LF inside quotes is kept as part of the value instead of ending the header.
 */
function dispositionParams(text: string, from: number): { params: Record<string, string>; openQuote?: string } {
  const params: Record<string, string> = {};
  let i = from;
  const skipSpace = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  while (i < text.length && text[i] !== ';' && !text.startsWith('\r\n', i)) i++;
  while (text[i] === ';') {
    i++;
    skipSpace();
    let key = '';
    while (i < text.length && text[i] !== '=' && text[i] !== ';' && !text.startsWith('\r\n', i)) key += text[i++];
    key = key.trim().toLowerCase();
    if (text[i] !== '=') continue;
    i++;
    skipSpace();
    let value = '';
    if (text[i] === '"') {
      i++;
      let closed = false;
      while (i < text.length) {
        const c = text[i++]!;
        if (c === '\\' && i < text.length) value += text[i++];
        else if (c === '"') {
          closed = true;
          break;
        } else value += c;
      }
      params[key] = value;
      if (!closed) return { params, openQuote: key };
      while (i < text.length && text[i] !== ';' && !text.startsWith('\r\n', i)) i++;
    } else {
      while (i < text.length && text[i] !== ';' && !text.startsWith('\r\n', i)) value += text[i++];
      params[key] = value.trim();
    }
  }
  return { params };
}
