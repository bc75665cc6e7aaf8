import type { IncomingMessage } from 'node:http';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import busboy from 'busboy';
import { AppError, invalidField } from '../errors.js';
import { CONTROL_RULE, checkFormField, checkFormText } from './body.js';

/**
 * The one multipart reader of every service (decision 0170): every refusal is the same 400 wherever a form is read.
 * Part headers holding a raw control byte are refused before busboy, which would only drop them as malformed.
 */

export interface MultipartOptions {
  limits: { fileSize: number; files: number; fields: number; fieldSize: number; parts?: number };
  /** `name` for identifiers, `text` for free text (decision 0135). */
  fieldKind: 'text' | 'name';
}

export interface FileInfo {
  filename: string | undefined;
  mimeType: string;
}

export interface MultipartHandlers {
  field(name: string, value: string): void;
  /** The handler reads or resumes `stream`. */
  file(name: string, stream: Readable, info: FileInfo): void;
  /** Always an AppError; nothing is handed on after it and the rest of the request is discarded. */
  error(err: AppError): void;
  close(): void;
}

export interface MultipartReader {
  /** The rest of the request is discarded; `error` gets `err`. */
  fail(err: AppError): void;
}

export const NO_BOUNDARY = 'must be multipart/form-data with a boundary';
const MALFORMED = 'malformed multipart/form-data';
const BOUNDARY = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i;

export const isMultipart = (req: IncomingMessage) => /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');

export function readMultipart(req: IncomingMessage, options: MultipartOptions, on: MultipartHandlers): MultipartReader {
  let failed = false;
  let parser: busboy.Busboy | undefined;
  let guard: PartHeaderGuard | undefined;
  const fail = (err: AppError) => {
    if (failed) return;
    failed = true;
    if (guard) req.unpipe(guard);
    else if (parser) req.unpipe(parser);
    // Read to the end so a client still sending gets the answer rather than a reset connection.
    req.resume();
    on.error(err);
  };
  const { limits } = options;
  try {
    parser = busboy({
      headers: req.headers,
      // busboy's latin1 default turns "é" into "Ã©".
      defParamCharset: 'utf8',
      // One byte over tells a file of exactly the limit from a larger one.
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

/** busboy refuses a longer part header itself. */
const HEADER_LIMIT = 16 * 1024 + 4;
const HEADER_END = Buffer.from('\r\n\r\n');
/** A tab is allowed here and refused later by the text rule. */
const RAW_CONTROL = /[^\P{Cc}\t\x80-\x9f]/u;

/** Holds each part header until whole; file bytes pass at once, searched only for the delimiter. */
class PartHeaderGuard extends Transform {
  private readonly delimiter: Buffer;
  /** A delimiter may span chunks; the stream starts as if after a CRLF. */
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
        // File bytes are never copied.
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
  // An open quote takes the rest of the header: a line break in the file name.
  if (disposition?.openQuote === 'filename' || disposition?.openQuote === 'filename*')
    throw invalidField(`${fieldLabel(name ?? 'file')}.filename`, CONTROL_RULE);
  // Line breaks between header lines are the header's own.
  if (!RAW_CONTROL.test(text.replaceAll('\r\n', ''))) return;
  throw invalidField(name !== undefined ? fieldLabel(name) : 'body', `its part header ${CONTROL_RULE}`);
}

/** As busboy reads them, except that a CR LF inside quotes stays in the value instead of ending the header. */
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
